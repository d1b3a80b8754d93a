"""The rule registry: every rule, one module each, in code order."""

from __future__ import annotations

# Re-exported; defined beside Diagnostic, so that reporters need not import every rule.
from tinker_lint.diagnostics import DOCS_BASE_URL as DOCS_BASE_URL
from tinker_lint.diagnostics import docs_url as docs_url
from tinker_lint.rules.base import Rule
from tinker_lint.rules.dependency_base import DependencyRule
from tinker_lint.rules.tnk101_wait_before_submit import WaitBeforeSubmit
from tinker_lint.rules.tnk102_step_not_overlapped import StepNotOverlapped
from tinker_lint.rules.tnk103_sequential_sampling import SequentialSampling
from tinker_lint.rules.tnk104_blocking_wait_in_async import BlockingWaitInAsync
from tinker_lint.rules.tnk105_deprecated_async_method import DeprecatedAsyncMethod
from tinker_lint.rules.tnk106_client_future_used_as_client import ClientFutureUsedAsClient
from tinker_lint.rules.tnk107_setup_call_in_hot_loop import SetupCallInHotLoop
from tinker_lint.rules.tnk108_create_task_on_apifuture import CreateTaskOnApiFuture
from tinker_lint.rules.tnk201_tokenizer_in_hot_loop import TokenizerInHotLoop
from tinker_lint.rules.tnk202_len_tokenizer import LenTokenizer
from tinker_lint.rules.tnk203_per_element_array_work import PerElementArrayWork
from tinker_lint.rules.tnk204_serialization_in_hot_loop import SerializationInHotLoop
from tinker_lint.rules.tnk205_file_io_in_hot_loop import FileIoInHotLoop
from tinker_lint.rules.tnk301_pydantic_prerelease import PydanticPrerelease
from tinker_lint.rules.tnk302_transformers_5_3_0 import Transformers530
from tinker_lint.rules.tnk303_transformers_vl_below_5 import TransformersVlBelow5

PYTHON_RULES: tuple[type[Rule], ...] = (
    WaitBeforeSubmit,
    StepNotOverlapped,
    SequentialSampling,
    BlockingWaitInAsync,
    DeprecatedAsyncMethod,
    ClientFutureUsedAsClient,
    SetupCallInHotLoop,
    CreateTaskOnApiFuture,
    TokenizerInHotLoop,
    LenTokenizer,
    PerElementArrayWork,
    SerializationInHotLoop,
    FileIoInHotLoop,
)

# Rules on dependency files (pyproject.toml, requirements*.txt, setup.cfg, lock files), checked by
# tinker_lint.deps, not by the Python engine.
DEPENDENCY_RULES: tuple[type[DependencyRule], ...] = (
    PydanticPrerelease,
    Transformers530,
    TransformersVlBelow5,
)

# Diagnostics the engine itself emits (not rules one can implement), for selection and docs.
ENGINE_CODES: dict[str, str] = {
    "TNK000": "internal-error",
    "TNK001": "syntax-error",
    "TNK002": "io-error",
}

RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in PYTHON_RULES}
DEPENDENCY_RULES_BY_CODE: dict[str, type[DependencyRule]] = {
    rule.code: rule for rule in DEPENDENCY_RULES
}
# Every rule with a docs page, Python and dependency-file rules alike.
DOCUMENTED_RULES: dict[str, type[Rule] | type[DependencyRule]] = {
    **RULES_BY_CODE,
    **DEPENDENCY_RULES_BY_CODE,
}
ALL_CODES: tuple[str, ...] = (*ENGINE_CODES, *DOCUMENTED_RULES)
