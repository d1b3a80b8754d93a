"""The rule registry: every rule, one module each, in code order."""

from __future__ import annotations

from tinker_lint.rules.base import Rule
from tinker_lint.rules.tnk101_wait_before_submit import WaitBeforeSubmit
from tinker_lint.rules.tnk102_step_not_overlapped import StepNotOverlapped
from tinker_lint.rules.tnk103_sequential_sampling import SequentialSampling
from tinker_lint.rules.tnk104_blocking_wait_in_async import BlockingWaitInAsync
from tinker_lint.rules.tnk105_deprecated_async_method import DeprecatedAsyncMethod
from tinker_lint.rules.tnk106_client_future_used_as_client import ClientFutureUsedAsClient
from tinker_lint.rules.tnk107_setup_call_in_hot_loop import SetupCallInHotLoop
from tinker_lint.rules.tnk108_create_task_on_apifuture import CreateTaskOnApiFuture

PYTHON_RULES: tuple[type[Rule], ...] = (
    WaitBeforeSubmit,
    StepNotOverlapped,
    SequentialSampling,
    BlockingWaitInAsync,
    DeprecatedAsyncMethod,
    ClientFutureUsedAsClient,
    SetupCallInHotLoop,
    CreateTaskOnApiFuture,
)

# Diagnostics the engine itself emits (not rules one can implement), for selection and docs.
ENGINE_CODES: dict[str, str] = {
    "TNK000": "internal-error",
    "TNK001": "syntax-error",
    "TNK002": "io-error",
}

RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in PYTHON_RULES}
ALL_CODES: tuple[str, ...] = (*ENGINE_CODES, *RULES_BY_CODE)

DOCS_BASE_URL = "https://github.com/tinker-lint/tinker-lint/blob/main/"


def docs_url(code: str) -> str:
    return f"{DOCS_BASE_URL}docs/rules/{code}.md"
