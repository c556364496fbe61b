"""The MLIR context with every dialect Kitsune reads and writes."""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.parser import Parser


def _guard_lexer() -> None:
    """xDSL's string-literal regex nests ``+`` in ``*``: an unterminated string followed by a long line
    backtracks exponentially (kitsune-opt hung). The same pattern with possessive quantifiers matches the
    same strings and fails at once, so the lexer reports "End of file reached before closing string literal"
    at the quote."""
    import re

    from xdsl.utils.mlir_lexer import MLIRLexer

    pat = MLIRLexer._unescaped_characters_regex.pattern
    if "++" not in pat:
        MLIRLexer._unescaped_characters_regex = re.compile(pat.replace("]+|", "]++|").replace(")*\"", ")*+\""))


_guard_lexer()


def kitsune_dialects():
    """The Kitsune dialects, for registration next to xDSL's own."""
    from kitsune.dialects.graph import Graph

    out = [Graph]
    try:  # later levels register themselves here when present
        from kitsune.dialects.dataflow import Dataflow  # type: ignore

        out.append(Dataflow)
    except ImportError:
        pass
    try:
        from kitsune.dialects.gpu_queue import GpuQueue  # type: ignore

        out.append(GpuQueue)
    except ImportError:
        pass
    return out


def make_context() -> Context:
    ctx = Context()
    for d in (Builtin, Func, Arith, *kitsune_dialects()):
        ctx.load_dialect(d)
    return ctx


def parse_module(text: str, name: str = "<string>") -> ModuleOp:
    """Parse and verify MLIR text (raises ParseError / VerifyException); an empty text is an empty module."""
    if not text.strip():
        return ModuleOp([])
    module = Parser(make_context(), text, name).parse_module()
    module.verify()
    return module
