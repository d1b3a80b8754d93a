"""The vocabulary of the text pre-filter: what a file must contain for the model to see a Tinker call,
a step, a tokenizer, built from the SDK tables (``model/facts/sdk.py``) the model matches on. Rules build
their declarations (``prefilter/needs.py``) from these; the first, cheapest pre-filter, run on every
file before anything is parsed (the second is ``prefilter/sketch.py``).

No libcst here: a flake8 run or an editor's check of a file that never names Tinker imports this
module only, not the parser (about 0.3 s).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from tinker_lint.model.facts import sdk
from tinker_lint.model.facts.names import (
    TORCH_BACKWARD_METHOD,
    TORCH_STEP_HOOKS_ALONE,
    TORCH_STEP_METHOD,
    TORCH_STEP_RECEIVER_PARTS,
)
from tinker_lint.model.facts.sdk import METHODS, Role, SdkMethod
from tinker_lint.prefilter.needs import AnyOf, Needs, TextFacts, parts, words

_ALL_METHODS = tuple(method for table in METHODS.values() for method in table.values())


def methods(test: Callable[[SdkMethod], bool]) -> AnyOf:
    """The names of the SDK methods ``test`` picks: the model takes a call for an SDK method only
    when it is ``receiver.<name>(...)`` with one of the tables' names (``SemanticModel.sdk_call``)."""
    return words(method.name for method in _ALL_METHODS if test(method))


# The name of Tinker's future class: an annotation with it types a value as a Tinker future
# (``SemanticModel.annotation_types``), without any call of an SDK method.
FUTURE_CLASS = "APIFuture"

# Something the model may take for Tinker's: a call of an SDK method, a client class (annotations,
# ``tinker.ServiceClient()``), the future class.
TINKER_NAMES = methods(lambda method: True) | words({*sdk.CLIENT_CLASSES, FUTURE_CLASS})


def _evidence_terms() -> frozenset[str]:
    """Lower-case parts of identifiers one of which a file must contain for the model to take
    anything in it for Tinker's (``SemanticModel.sdk_call`` and the type inference): a client class
    or ``APIFuture`` (also what a ``tinker.`` qualified name ends with), a method only Tinker has,
    a receiver name hint (matched inside the receiver's name, in any case), a keyword only Tinker's
    methods take. A term inside another is enough alone."""
    terms = {
        *(name.lower() for name in sdk.CLIENT_CLASSES),
        FUTURE_CLASS.lower(),
        *sdk.DISTINCTIVE,
        *(hint for hint, _ in sdk.RECEIVER_NAME_HINTS),
        *sdk.TINKER_ONLY_KEYWORDS,
    }
    return frozenset(t for t in terms if not any(o != t and o in t for o in terms))


TINKER_EVIDENCE = parts(_evidence_terms())
EVIDENCE_TERMS = tuple(sorted(TINKER_EVIDENCE.parts))

# What every rule on Tinker calls and futures needs (rules add their own methods or calls).
TINKER = Needs(text=(TINKER_NAMES, TINKER_EVIDENCE))

STEP_ROLES = frozenset({Role.TRAIN, Role.SAMPLE})  # a submit of these makes a loop hot
STEP_METHODS = methods(lambda method: method.role in STEP_ROLES)
# What a hot-loop rule (TNK107, TNK2xx) needs: a loop that submits a training or sampling request,
# seen in the text as such a method's name and the evidence that it is Tinker's; unless the project
# names its own step functions (``hot-loop-calls``), then in the tree only.
HOT_LOOP = Needs(
    step=(STEP_METHODS, TINKER_EVIDENCE),
    tree=(lambda sketch: sketch.hot_loop,),
)


@lru_cache(maxsize=8)
def hot_loop_names(globs: tuple[str, ...]) -> AnyOf | None:
    """What a call ``hot-loop-calls`` names has in the text: the model matches each glob to the
    called name as written or to its last part (``names.names_hot_call``), so a glob that is a plain
    name is a word of the text. None when a glob is a pattern (its ``*`` may match across dots)."""
    if not all(glob.isidentifier() for glob in globs):
        return None
    return words(globs)


# Every way the model types a value as a tokenizer has this in the text, in some case: a name such
# as ``tokenizer`` or ``self._tokenizer``, ``get_tokenizer()``, ``AutoTokenizer.from_pretrained``,
# a ``PreTrainedTokenizer`` or ``Tokenizer`` annotation (``SemanticModel._infer_call``,
# ``annotation_types``, ``_named_tokenizer``; ``tests/test_prefilter_sound.py`` checks the tables).
TOKENIZER = parts({"tokenizer"})

DEPRECATED_ASYNC = frozenset(
    method.name for method in _ALL_METHODS if method.deprecated and method.name.endswith("_async")
)


def mentions_tinker(text: str) -> bool:
    """Whether ``text`` has what ``TINKER`` needs: a Tinker name and the evidence that it is
    Tinker's. CPython's standard library has 20 files with a `.sample(` or `.forward(` call and
    none with the evidence."""
    return TINKER.admits_text(TextFacts(text))


# What makes a loop a PyTorch training step (``model/analyses/torch_steps.py``), in the text: a ``backward``
# call; a ``step`` call on a receiver named like an optimizer, an engine or a grad scaler (every
# name ``names.torch_step_receiver`` takes holds one of ``TORCH_STEP_RECEIVER_PARTS``); the name
# of a per-step hook. Both clauses: every TNK4xx rule's declaration but TNK402's asks for them, so
# the gate below admits what they may read. The two calls are attributes (``x.step(...)``): the
# word alone is in 110 files of CPython's standard library (``def step``, "step" in a comment),
# 2 of which call them.
_STEP_WORDS = frozenset({TORCH_BACKWARD_METHOD, *TORCH_STEP_HOOKS_ALONE, "train_step", "run_step"})
TORCH_STEP = AnyOf(
    words=_STEP_WORDS - {TORCH_BACKWARD_METHOD},
    attributes=frozenset({TORCH_BACKWARD_METHOD, TORCH_STEP_METHOD}),
)
TORCH_STEP_RECEIVER = AnyOf(words=_STEP_WORDS, parts=TORCH_STEP_RECEIVER_PARTS)

# What shows a Hugging Face ``datasets`` object (``model/analyses/datasets.py``): its import. TNK402 reads
# them in data-generation loops and ``map`` calls, which need no training step.
DATASETS = words({"datasets"})
# What the PyTorch rules' declarations ask: every clause of one of these at least (a torch step's
# two, or TNK402's import).
TORCH_GATES = ((TORCH_STEP, TORCH_STEP_RECEIVER), (DATASETS,))


def may_concern_torch(text: str | TextFacts) -> bool:
    """Whether a PyTorch rule (TNK4xx, which needs no Tinker) may find anything in the file."""
    facts = text if isinstance(text, TextFacts) else TextFacts(text)
    return any(all(facts.holds(clause) for clause in gate) for gate in TORCH_GATES)


def may_concern_tinker(text: str | TextFacts) -> bool:
    """Whether any rule's text test can pass on the file, unless the project sets
    ``hot-loop-calls``: every rule needs ``TINKER_NAMES`` and ``TINKER_EVIDENCE`` (a hot-loop rule
    through its step: ``tests/test_prefilter_sound.py`` checks each rule's declaration)."""
    facts = text if isinstance(text, TextFacts) else TextFacts(text)
    return facts.holds(TINKER_EVIDENCE) and facts.holds(TINKER_NAMES)


def may_concern(facts: TextFacts, hot_loop_calls: tuple[str, ...] = ()) -> bool:
    """Whether any rule's text test can pass on the file: every rule's declaration asks for
    Tinker's names with the evidence (``may_concern_tinker``) or, for a PyTorch rule, a torch step
    or a dataset (``may_concern_torch``); a hot-loop rule, under the project's ``hot-loop-calls``,
    a call those name instead of a Tinker step (any call, for a glob that is a pattern). False: no
    rule can find anything in the file's own text, and neither libcst nor the rules are needed
    for it (only the project's helpers it imports can still bring a rule in)."""
    if may_concern_tinker(facts) or may_concern_torch(facts):
        return True
    if not hot_loop_calls:
        return False
    names = hot_loop_names(hot_loop_calls)
    return names is None or facts.holds(names)
