"""Arithmetic on register values: binary operators, the op table's functions and accumulation, with constant
folding (a value with ``const`` set is a literal, not a block)."""

from __future__ import annotations

from kitsune.codegen.plan import CodegenError
from kitsune.codegen.triton_gen.blocks import Blocks
from kitsune.codegen.triton_gen.emitter import TV
from kitsune.codegen.triton_gen.syntax import NAN, combine_text


class Arithmetic:
    def __init__(self, blocks: Blocks):
        self.b = blocks

    def combine(self, op: str, a: TV, b: TV) -> TV:
        """``a op b`` for an accumulating statement op."""
        f = self.b.union(a, b)
        x, y = self.b.place(a, f), self.b.place(b, f)
        return self.b.tmp(combine_text(op, x, y), f, max(a.depth, b.depth))

    def binop(self, op: str, a: TV, b: TV) -> TV:
        if a.const is not None and b.const is not None and op in "+-*/":
            try:
                v = {"+": a.const + b.const, "-": a.const - b.const, "*": a.const * b.const,
                     "/": a.const / b.const}[op]
                return TV("", (), 0, "f", v)
            except ZeroDivisionError:
                pass
        if op == "**":
            if b.const is not None and float(b.const).is_integer() and 0 <= b.const <= 4:
                n = int(b.const)
                if n == 0:
                    return TV("", (), 0, "f", 1.0)
                x = self.b.place(a, a.frame)
                return self.b.tmp(" * ".join([x] * n), a.frame, a.depth)
            if b.const == 0.5:
                return self.call("sqrt", [a])
            f = self.b.union(a, b)
            return self.b.tmp(f"tl.exp(tl.log({self.b.place(a, f)}) * {self.b.place(b, f)})", f, max(a.depth, b.depth))
        if op == "*" and (a.const == 1.0 or b.const == 1.0):
            return b if a.const == 1.0 else a
        if op in "+-" and b.const == 0.0 and len(op) == 1:
            return a
        f = self.b.union(a, b)
        x, y = self.b.place(a, f), self.b.place(b, f)
        kind = "b" if op in ("==", "!=", "<", "<=", ">", ">=") else ("i" if a.kind == b.kind == "i" and op != "/" else "f")
        if op == "/" and a.kind == "i":
            x = f"{x}.to(tl.float32)"
        return self.b.tmp(f"{x} {op} {y}", f, max(a.depth, b.depth), kind)

    def call(self, fn: str, vals: list[TV]) -> TV:
        f = self.b.union(*vals)
        depth = max(v.depth for v in vals)
        xs = [self.b.place(v, f) for v in vals]
        if fn in ("exp", "log", "sqrt", "rsqrt", "erf", "sigmoid", "tanh", "sin", "cos", "trunc", "floor"):
            x = xs[0] if vals[0].kind == "f" else f"{xs[0]}.to(tl.float32)"
            code = {"exp": f"tl.exp({x})", "log": f"tl.log({x})", "sqrt": f"tl.sqrt({x})",
                    "rsqrt": f"tl.rsqrt({x})", "erf": f"tl.erf({x})", "sigmoid": f"tl.sigmoid({x})",
                    "tanh": f"(2.0 * tl.sigmoid(2.0 * {x}) - 1.0)", "sin": f"tl.sin({x})", "cos": f"tl.cos({x})",
                    "trunc": f"tl.where({x} < 0, tl.ceil({x}), tl.floor({x}))", "floor": f"tl.floor({x})"}[fn]
            if vals[0].const is not None:
                c = float(vals[0].const)
                import math as _m
                fold = {"exp": _m.exp, "log": _m.log, "sqrt": _m.sqrt, "rsqrt": lambda z: 1 / _m.sqrt(z),
                        "erf": _m.erf, "sigmoid": lambda z: 1 / (1 + _m.exp(-z)), "tanh": _m.tanh,
                        "sin": _m.sin, "cos": _m.cos, "trunc": _m.trunc, "floor": _m.floor}
                try:
                    return TV("", (), 0, "f", fold[fn](c))
                except (ValueError, ZeroDivisionError, OverflowError):
                    pass
            return self.b.tmp(code, f, depth)
        if fn == "abs":
            return self.b.tmp(f"tl.abs({xs[0]})", f, depth, vals[0].kind)
        if fn in ("max", "min"):
            if all(v.const is not None for v in vals):
                return TV("", (), 0, "f", (max if fn == "max" else min)(vals[0].const, vals[1].const))
            kind = vals[0].kind if vals[0].kind == vals[1].kind else "f"
            nan = f", {NAN}" if kind == "f" else ""  # NaN wins, as in torch
            return self.b.tmp(f"tl.{'maximum' if fn == 'max' else 'minimum'}({xs[0]}, {xs[1]}{nan})", f, depth, kind)
        if fn == "select":
            c = xs[0] if vals[0].kind == "b" else f"({xs[0]} != 0)"
            kind = vals[1].kind if vals[1].kind == vals[2].kind else "f"
            return self.b.tmp(f"tl.where({c}, {xs[1]}, {xs[2]})", f, depth, kind)
        raise CodegenError(f"no Triton code for the function {fn}")


__all__ = ["Arithmetic"]
