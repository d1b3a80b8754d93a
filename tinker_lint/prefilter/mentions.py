"""What a file's text must contain for a rule to find anything in it: the first, cheapest
pre-filter, run on every file before anything is parsed (the second is ``prefilter/sketch.py``).

No libcst here: a flake8 run or an editor's check of a file that never names Tinker imports this
module only, not the parser (about 0.3 s).
"""

from __future__ import annotations

import re

from tinker_lint.model import sdk
from tinker_lint.model.sdk import METHODS

# Text a file must contain for a Tinker rule to find anything in it: a call of a Tinker method, or a
# Tinker type. Files without it are never parsed by libcst (shared/performance-notes.md: only 58 of
# 303 cookbook files submit anything). Measured cheap: one regex scan per file.
TINKER_CALLS = re.compile(
    r"\.(?:forward_backward\w*|optim_step\w*|forward(?:_async)?|sample(?:_async)?"
    r"|compute_logprobs\w*|save_state\w*|save_weights\w*|load_state\w*|create_\w*client\w*"
    r"|get_info\w*|get_tokenizer)\s*\(|ServiceClient|TrainingClient|SamplingClient|APIFuture"
)


def _evidence_terms() -> tuple[str, ...]:
    """Lower-case text one of which a file must contain for the model to take anything in it for
    Tinker's (see ``SemanticModel.sdk_call`` and the type inference): a client class or
    ``APIFuture`` (also what a ``tinker.`` qualified name ends with), a method only Tinker has, a
    receiver name hint, a keyword only Tinker's methods take; and ``get_tokenizer``, a setup call
    of its own (TNK107). A term inside another is enough alone."""
    terms = {
        *(name.lower() for name in sdk.CLIENT_CLASSES),
        "apifuture",
        "get_tokenizer",
        *sdk.DISTINCTIVE,
        *(hint for hint, _ in sdk.RECEIVER_NAME_HINTS),
        *sdk.TINKER_ONLY_KEYWORDS,
    }
    return tuple(sorted(t for t in terms if not any(o != t and o in t for o in terms)))


EVIDENCE_TERMS = _evidence_terms()
_last_scanned: list[tuple[str, bool]] = []
_last_asked: list[tuple[str, bool]] = []


def tinker_call_in(text: str) -> bool:
    """Whether ``TINKER_CALLS`` occurs in ``text``. Every rule asks this of the same file in turn,
    and the scan is most of a pre-filter's cost (0.4 s for CPython's 34 MB standard library), so
    the answer for the last text is kept."""
    if _last_scanned and _last_scanned[0][0] is text:
        return _last_scanned[0][1]
    found = TINKER_CALLS.search(text) is not None
    _last_scanned[:] = [(text, found)]
    return found


def mentions_tinker(text: str) -> bool:
    """Whether a Tinker call (``TINKER_CALLS``) is in ``text``, and the evidence the model needs to
    take one for Tinker's (``EVIDENCE_TERMS``, case-insensitively, as receiver names are matched):
    CPython's standard library has 20 files with the first and none with the second. (A loop made
    hot by ``hot-loop-calls`` needs no such evidence: the hot-loop rules ask ``tinker_call_in``.)"""
    if _last_asked and _last_asked[0][0] is text:
        return _last_asked[0][1]
    found = tinker_call_in(text)
    if found:
        lowered = text.lower()
        found = any(term in lowered for term in EVIDENCE_TERMS)
    _last_asked[:] = [(text, found)]
    return found


DEPRECATED_ASYNC = frozenset(
    method.name
    for table in METHODS.values()
    for method in table.values()
    if method.deprecated and method.name.endswith("_async")
)


def names_deprecated_async(text: str) -> bool:
    """Whether a deprecated ``*_async`` method's name is in ``text``: a finding is a call of one.
    Found from each ``_async`` (few per file) back to the start of its identifier, which is many
    times faster than one regular expression of every name."""
    at = text.find("_async")
    while at != -1:
        end = at + len("_async")
        if not (end < len(text) and (text[end].isalnum() or text[end] == "_")):
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
                start -= 1
            if text[start:end] in DEPRECATED_ASYNC:
                return True
        at = text.find("_async", end)
    return False


def may_concern_tinker(text: str) -> bool:
    """Whether any rule's text test (``Rule.applies_to``) can pass on ``text``: each asks for a
    Tinker call (``tinker_call_in``) or a deprecated ``*_async`` name (TNK105). A rule made hot by
    ``hot-loop-calls`` still asks for a Tinker call name in the text."""
    return tinker_call_in(text) or names_deprecated_async(text)
