"""What an annotation says a value is (``tinker.TrainingClient``, ``APIFuture[T]``,
``list[...]``, ``PreTrainedTokenizer``, ``torch.Tensor``). Names only: no inference needed."""

from __future__ import annotations

from collections.abc import Iterator

import libcst as cst

from tinker_lint.model.facts import sdk
from tinker_lint.model.facts.imports import ImportMap, dotted_name
from tinker_lint.model.facts.scopes import Scope, is_tinker_name, qualify
from tinker_lint.model.facts.types import ARRAY, MODEL_INPUT, TOKENIZER, Kind, TType, client


def annotation_types(
    imports: ImportMap, module_scope: Scope, ann: cst.BaseExpression, scope: Scope
) -> Iterator[TType]:
    """The types an annotation names: Tinker clients and futures, ``ModelInput``, tokenizers,
    arrays, and lists, optionals and unions of them. A string annotation is parsed, and read in the module scope."""
    # Exact types (libcst's node classes are final): ``isinstance`` on them goes through ``ABCMeta``.
    if type(ann) is cst.SimpleString:
        try:
            parsed = cst.parse_expression(str(ann.evaluated_value))
        except (cst.ParserSyntaxError, ValueError, TypeError):
            return
        # A string annotation names things imported in this module.
        yield from annotation_types(imports, module_scope, parsed, module_scope)
        return
    if type(ann) is cst.BinaryOperation and type(ann.operator) is cst.BitOr:
        yield from annotation_types(imports, module_scope, ann.left, scope)
        yield from annotation_types(imports, module_scope, ann.right, scope)
        return
    if type(ann) is cst.Subscript:
        head = dotted_name(ann.value) or ""
        last = head.rsplit(".", 1)[-1]
        args = [e.slice.value for e in ann.slice if type(e.slice) is cst.Index]
        if last in ("Optional", "Union", "Annotated"):
            for arg in args[:1] if last == "Annotated" else args:
                yield from annotation_types(imports, module_scope, arg, scope)
        elif last in ("list", "List", "Sequence", "Iterable", "tuple", "Tuple", "deque"):
            for arg in args[:1]:
                for t in annotation_types(imports, module_scope, arg, scope):
                    yield TType(Kind.LIST, inner=t)
        elif last == "APIFuture" or is_tinker_name(qualify(imports, ann.value, scope), "APIFuture"):
            inner = [t for arg in args for t in annotation_types(imports, module_scope, arg, scope)]
            yield TType(Kind.FUTURE, inner=inner[0] if inner else TType(Kind.RESULT))
        elif last == "NDArray" and (qualify(imports, ann.value, scope) or "").startswith("numpy."):
            yield ARRAY
        return
    qualified = qualify(imports, ann, scope) or ""
    last = qualified.rsplit(".", 1)[-1]
    if qualified.startswith("tinker.") or qualified.startswith("tinker_cookbook."):
        if last in sdk.CLIENT_CLASSES:
            yield client(sdk.CLIENT_CLASSES[last])
        elif last == "APIFuture":
            yield TType(Kind.FUTURE, inner=TType(Kind.RESULT))
        elif last == "Tokenizer":
            yield TOKENIZER
        elif last == "ModelInput":
            yield MODEL_INPUT
    elif last in (
        "PreTrainedTokenizer",
        "PreTrainedTokenizerFast",
        "PreTrainedTokenizerBase",
        "Tokenizer",
    ):
        yield TOKENIZER
    elif qualified in ("torch.Tensor", "numpy.ndarray"):
        yield ARRAY
