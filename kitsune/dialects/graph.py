"""The ``graph`` dialect: tensor ops with value semantics, one per ATen-level op.

The op classes are generated from the op table (``kitsune.semantics.optable``),
which declares each op's operands, attributes and meaning once. Every op shares
one readable custom syntax::

    %y = graph.softmax %x {dim = 1} : tensor<4x8xf32> -> tensor<4x8xf32>
    %c = graph.matmul %a, %b {transpose_b = true} : tensor<4x8xf32>, tensor<16x8xf32> -> tensor<4x16xf32>
    %p, %q = graph.split %x {dim = 1, sizes = [3, 5]} : tensor<4x8xf32> -> (tensor<4x3xf32>, tensor<4x5xf32>)
    %k = graph.constant dense<1.0> : tensor<4xf32>

Attributes in braces are the op's own (properties); other (discardable)
attributes follow as ``attributes {...}``. Verifiers infer the result shapes
from the op table and say which operand, which dimension and what was expected.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import (
    BFloat16Type,
    DYNAMIC_INDEX,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
    f64,
)
from xdsl.dialects.builtin import FileLineColLoc
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from kitsune.semantics import optable
from kitsune.semantics.comprehension import DYN
from kitsune.semantics.optable import OPS, OpDef, OpError

# ------------------------------------------------------------------ types


def elem_kind(t: Attribute) -> str:
    """'float', 'int' or 'bool' for a tensor element type."""
    if isinstance(t, (Float16Type, Float32Type, Float64Type, BFloat16Type)):
        return "float"
    if isinstance(t, IntegerType):
        return "bool" if t.width.data == 1 else "int"
    return "other"


def shape_of(t: Attribute) -> tuple[int, ...]:
    assert isinstance(t, TensorType)
    return tuple(DYN if d < 0 else d for d in t.get_shape())


def elem_bytes(t: Attribute) -> int:
    e = t.get_element_type() if isinstance(t, TensorType) else t
    if isinstance(e, (Float16Type, BFloat16Type)):
        return 2
    if isinstance(e, Float32Type):
        return 4
    if isinstance(e, Float64Type):
        return 8
    if isinstance(e, IntegerType):
        return max(1, e.width.data // 8)
    return 4


def fmt_type(t: Attribute) -> str:
    from io import StringIO

    s = StringIO()
    Printer(stream=s).print_attribute(t)
    return s.getvalue()


def fmt_loc(op: Operation) -> str:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}: "
    return ""


# --------------------------------------------------------------- attributes

_ATTR_TYPES = {"int": IntegerAttr, "ints": DenseArrayBase, "float": FloatAttr, "bool": IntegerAttr, "str": StringAttr}


def to_attr(kind: str, v: Any) -> Attribute:
    if kind == "int":
        return IntegerAttr(int(v), i64)
    if kind == "ints":
        return DenseArrayBase.from_list(i64, [int(x) for x in v])
    if kind == "float":
        return FloatAttr(float(v), f64)
    if kind == "bool":
        return IntegerAttr(1 if v else 0, IntegerType(1))
    if kind == "str":
        return StringAttr(str(v))
    raise AssertionError(kind)


def from_attr(kind: str, a: Attribute) -> Any:
    if kind == "int":
        return int(a.value.data)
    if kind == "ints":
        return tuple(int(x) for x in a.get_values())
    if kind == "float":
        return float(a.value.data)
    if kind == "bool":
        return bool(a.value.data)
    if kind == "str":
        return a.data
    raise AssertionError(kind)


def _fmt_value(kind: str, v: Any) -> str:
    if kind == "ints":
        return "[" + ", ".join(str(x) for x in v) + "]"
    if kind == "bool":
        return "true" if v else "false"
    if kind == "float":
        if v == v and abs(v) != float("inf"):
            r = repr(float(v))
            # MLIR float literals need a '.' before the exponent (1e-05 -> 1.0e-05)
            return r.replace("e", ".0e", 1) if "e" in r and "." not in r else r
        return "inf" if v > 0 else "-inf"
    if kind == "str":
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return str(v)


# --------------------------------------------------------------------- ops


_VERIFIED: set = set()  # (op name, properties, operand types, result types) that passed GraphOp verification


_HEX_FLOAT = {16: ("<H", "<e"), 32: ("<I", "<f"), 64: ("<Q", "<d")}


def _hex_floats(value: DenseIntOrFPElementsAttr, text: str) -> DenseIntOrFPElementsAttr:
    """A float constant printed with hex literals (how non-finite values print: ``dense<0xff800000> :
    tensor<f32>`` is -inf) holds those bit patterns, but xDSL's parser reads them as integers (4.28e9): read
    them back as the bits they are."""
    import re
    import struct

    body = text[text.find("<") + 1:text.rfind(">")] if "dense<" in text else ""
    elem = value.type.get_element_type()
    if "0x" not in body or body.lstrip().startswith('"') or not hasattr(elem, "bitwidth") or isinstance(
            elem, IntegerType):
        return value
    bf16 = isinstance(elem, BFloat16Type)
    width = 32 if bf16 else elem.bitwidth
    vals = []
    for tok in re.findall(r"-?0x[0-9a-fA-F]+|[-+0-9.eE]+|inf|nan", body.split(":")[0]):
        if tok.lower().lstrip("-").startswith("0x"):
            bits = int(tok.lstrip("-"), 16) << (16 if bf16 else 0)
            u, f = _HEX_FLOAT[width]
            v = struct.unpack(f, struct.pack(u, bits))[0]
            vals.append(-v if tok.startswith("-") else v)
        else:
            vals.append(float(tok))
    n = 1
    for d in value.type.get_shape():
        n *= d
    if len(vals) not in (1, n):
        return value
    return DenseIntOrFPElementsAttr.from_list(value.type, vals if len(vals) == n else vals * n)


class GraphOp(IRDLOperation):
    """Base of every graph op: table-driven syntax, verification and queries."""

    OPDEF: ClassVar[OpDef]

    # ---- queries

    def attrs(self) -> dict[str, Any]:
        """Attribute values as Python values, defaults filled in."""
        out = {}
        for k, spec in self.OPDEF.attrs.items():
            a = self.properties.get(k)
            out[k] = from_attr(spec.kind, a) if a is not None else spec.default
        return out

    def operand_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(o.type) for o in self.operands]

    def result_shapes(self) -> list[tuple[int, ...]]:
        return [shape_of(r.type) for r in self.results]

    def comprehension(self) -> str | None:
        """This op's tensor-comprehension program (None for reshape / constant)."""
        return optable.comprehension_text(self.OPDEF, self.operand_shapes(), self.attrs())

    def counts(self) -> optable.OpCounts:
        """FLOPs and fewest bytes moved, from the op table."""
        return optable.op_counts(
            self.OPDEF, self.operand_shapes(), self.attrs(), [elem_bytes(o.type) for o in self.operands],
            self.result_shapes(), [elem_bytes(r.type) for r in self.results],
        )

    # ---- verification

    def verify_(self) -> None:
        # A pipeline verifies the whole module after every pass: an op whose name, properties and operand /
        # result types were already found valid is valid again (the checks read nothing else); constants
        # (large values, cheap checks) are always checked.
        key = None
        if self.OPDEF.name != "constant":
            try:
                key = (self.name, tuple(self.properties.items()), tuple(o.type for o in self.operands),
                       tuple(r.type for r in self.results))
                if key in _VERIFIED:
                    return
            except TypeError:  # an unhashable attribute: check it every time
                key = None
        self._verify()
        if key is not None:
            if len(_VERIFIED) > 100_000:
                _VERIFIED.clear()
            _VERIFIED.add(key)

    def _verify(self) -> None:
        od = self.OPDEF
        where = fmt_loc(self)

        def fail(msg: str):
            raise VerifyException(f"{where}'{self.name}' {msg}")

        for k, spec in od.attrs.items():
            a = self.properties.get(k)
            if a is None:
                if spec.default is None:
                    fail(f"needs attribute '{k}' ({spec.kind})")
                continue
            if not isinstance(a, _ATTR_TYPES[spec.kind]):
                fail(f"attribute '{k}' must be {spec.kind}, got {a}")
            if spec.kind == "bool" and not (isinstance(a.type, IntegerType) and a.type.width.data == 1):
                fail(f"attribute '{k}' must be a bool (true/false)")
            if spec.choices and from_attr(spec.kind, a) not in spec.choices:
                fail(f"attribute '{k}' must be one of {', '.join(map(repr, spec.choices))}, "
                     f"got {from_attr(spec.kind, a)!r}")
        seg = self.properties.get("operandSegmentSizes")
        if isinstance(seg, DenseArrayBase):
            # optional operands are positional: a later one needs every earlier one
            given = [(o.name, n) for o, n in zip(od.operands, seg.get_values()) if o.kind == "optional"]
            for (first, n1), (later, n2) in zip(given, given[1:]):
                if n1 == 0 and n2 > 0:
                    fail(f"optional operand '{later}' is given without '{first}' (optional operands are positional)")
        slots = optable.operand_slots(od, len(self.operands))
        names = [name for _, name in slots]
        for i, o in enumerate(self.operands):
            if not isinstance(o.type, TensorType):
                fail(f"operand '{names[i]}' must be a tensor, got {fmt_type(o.type)}")
            spec = slots[i][0]
            k = elem_kind(o.type.get_element_type())
            if spec.dtype != "any" and k != spec.dtype:
                fail(f"operand '{names[i]}' must have {spec.dtype} elements, got {fmt_type(o.type)}")
        for i, r in enumerate(self.results):
            if not isinstance(r.type, TensorType):
                fail(f"result #{i} must be a tensor, got {fmt_type(r.type)}")
        for what, v in [(f"operand '{n}'", o) for n, o in zip(names, self.operands)] + \
                [(f"result #{i}", r) for i, r in enumerate(self.results)]:
            if 0 in v.type.get_shape():
                fail(f"{what} has a zero-size dimension ({fmt_type(v.type)}): Kitsune does not compile empty "
                     "tensors; drop the op or give the dimension a size")
        if od.name == "constant":
            return self._verify_constant(fail)
        # element types
        rule = od.result_dtype
        if rule == "same" and self.operands:
            et = self.operands[0].type.get_element_type()
            for i, o in enumerate(self.operands):
                if od.operands[0].dtype == "any" or slots[i][0].dtype == "float":
                    if od.category == "elementwise" and o.type.get_element_type() != et:
                        fail(f"operands must have one element type: '{names[0]}' is {fmt_type(et)}, "
                             f"'{names[i]}' is {fmt_type(o.type.get_element_type())} (insert a graph.cast)")
            for i, r in enumerate(self.results):
                if r.type.get_element_type() != et:
                    fail(f"result #{i} must have element type {fmt_type(et)}, got {fmt_type(r.type)}")
        elif rule == "bool":
            a, b = self.operands[0].type.get_element_type(), self.operands[1].type.get_element_type()
            if a != b:
                fail(f"operands must have one element type, got {fmt_type(a)} and {fmt_type(b)}")
            for r in self.results:
                if elem_kind(r.type.get_element_type()) != "bool":
                    fail(f"result must have i1 elements, got {fmt_type(r.type)}")
        elif rule.startswith("operand:"):
            oname = rule.split(":", 1)[1]
            idxs = [i for i, n in enumerate(names) if n == oname or n.startswith(oname + "#")]
            for i in idxs:
                et = self.operands[i].type.get_element_type()
                for r in self.results:
                    if r.type.get_element_type() != et:
                        fail(f"result element type {fmt_type(r.type.get_element_type())} must match "
                             f"'{names[i]}' ({fmt_type(et)})")
        # shapes
        try:
            inferred = optable.infer(od, self.operand_shapes(), self.attrs(), self.result_shapes())
        except OpError as e:
            fail(str(e))
        if od.results != "variadic" and len(self.results) != len(inferred):
            fail(f"has {len(self.results)} results, expected {len(inferred)}")
        if len(self.results) != len(inferred):
            fail(f"has {len(self.results)} results, the attributes give {len(inferred)}")
        for i, (r, s) in enumerate(zip(self.results, inferred)):
            got = shape_of(r.type)
            if len(got) != len(s) or any(a != b and DYN not in (a, b) for a, b in zip(got, s)):
                fail(f"result #{i} has type {fmt_type(r.type)}, but the operands give shape "
                     f"[{', '.join('?' if d == DYN else str(d) for d in s)}]")

    def _verify_constant(self, fail):
        v = self.properties.get("value")
        if not isinstance(v, DenseIntOrFPElementsAttr):
            fail("needs a dense elements value")
        if v.type != self.results[0].type:
            fail(f"value type {fmt_type(v.type)} does not match result type {fmt_type(self.results[0].type)}")

    # ---- syntax

    def print(self, printer: Printer) -> None:
        od = self.OPDEF
        if od.name == "constant":
            printer.print_string(" ")
            printer.print_attribute(self.properties["value"])
            if self.attributes:
                printer.print_op_attributes(self.attributes, print_keyword=True)
            return
        printer.print_string(" ")
        printer.print_list(self.operands, printer.print_ssa_value)
        items = []
        for k, spec in od.attrs.items():
            a = self.properties.get(k)
            if a is None or not isinstance(a, _ATTR_TYPES[spec.kind]):
                continue
            v = from_attr(spec.kind, a)
            if spec.default is not None and v == spec.default:
                continue
            items.append(f"{k} = {_fmt_value(spec.kind, v)}")
        if items:
            printer.print_string(" {" + ", ".join(items) + "}")
        if self.attributes:
            printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" : ")
        printer.print_list((o.type for o in self.operands), printer.print_attribute)
        printer.print_string(" -> ")
        if len(self.results) == 1:
            printer.print_attribute(self.results[0].type)
        else:
            printer.print_string("(")
            printer.print_list((r.type for r in self.results), printer.print_attribute)
            printer.print_string(")")

    @classmethod
    def parse(cls, parser: Parser) -> GraphOp:
        od = cls.OPDEF
        start = parser._current_token.span
        loc = _loc_of(start)
        if od.name == "constant":
            begin = parser._current_token.span.start
            value = parser.parse_attribute()
            if not isinstance(value, DenseIntOrFPElementsAttr):
                parser.raise_error("graph.constant expects a dense<...> : tensor<...> value", start)
            value = _hex_floats(value, start.input.content[begin:parser._current_token.span.start])
            attributes = parser.parse_optional_attr_dict_with_keyword()
            op = cls.create(result_types=[value.type], properties={"value": value},
                            attributes=attributes.data if attributes else {})
            op.location = loc
            return op
        operands = parser.parse_optional_undelimited_comma_separated_list(
            parser.parse_optional_unresolved_operand, parser.parse_unresolved_operand
        ) or []
        props: dict[str, Attribute] = {}
        if parser.parse_optional_punctuation("{") is not None:
            while True:
                key_span = parser._current_token.span
                key = parser.parse_identifier(" (attribute name)")
                if key not in od.attrs:
                    parser.raise_error(
                        f"'graph.{od.name}' has no attribute '{key}'"
                        + (f"; it has: {', '.join(od.attrs)}" if od.attrs else ""), key_span)
                parser.parse_punctuation("=")
                props[key] = _parse_value(parser, od.attrs[key].kind, key)
                if parser.parse_optional_punctuation(",") is None:
                    break
            parser.parse_punctuation("}")
        attributes = parser.parse_optional_attr_dict_with_keyword()
        parser.parse_punctuation(":")
        types_pos = parser._current_token.span
        operand_types = []
        if operands:
            operand_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation("->")
        if parser.parse_optional_punctuation("(") is not None:
            result_types = parser.parse_comma_separated_list(parser.Delimiter.NONE, parser.parse_type)
            parser.parse_punctuation(")")
        else:
            result_types = [parser.parse_type()]
        if len(operand_types) != len(operands):
            parser.raise_error(
                f"'graph.{od.name}' has {len(operands)} operand(s) but {len(operand_types)} operand type(s)",
                types_pos)
        values = parser.resolve_operands(operands, operand_types, start)
        groups = _group_operands(od, values, parser, start)
        if od.results == 1 and len(result_types) != 1:
            parser.raise_error(f"'graph.{od.name}' has one result, got {len(result_types)} result types", types_pos)
        op = cls.build(operands=groups, result_types=[result_types] if od.results == "variadic" else result_types,
                       properties=props, attributes=attributes.data if attributes else {})
        op.location = loc
        return op


def is_last_dim_concat(op: Operation) -> bool:
    """``op`` is a graph concat along its result's last dim (each result row is its operands' rows side by
    side)."""
    if not isinstance(op, GraphOp) or op.OPDEF.name != "concat" or not op.results:
        return False
    rank = len(shape_of(op.results[0].type))
    return rank > 0 and op.attrs()["dim"] % rank == rank - 1


def _loc_of(span) -> Attribute | None:
    from xdsl.dialects.builtin import IntAttr, UnknownLoc

    try:
        loc = span.get_location()
        name = loc.file if hasattr(loc, "file") else span.input.name
        line_start = span.input.get_start_of_line(span.start)
        text = span.input.content[line_start:span.start]
        text = text.decode() if isinstance(text, bytes) else text
        col = len(text) - len(text.lstrip()) + 1
        return FileLineColLoc(StringAttr(str(name)), IntAttr(loc.line), IntAttr(col))
    except Exception:  # pragma: no cover - location is best effort
        return UnknownLoc()


def _parse_value(parser: Parser, kind: str, key: str) -> Attribute:
    pos = parser._current_token.span
    if kind == "ints":
        vals = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, lambda: parser.parse_integer(False))
        return to_attr(kind, vals)
    if kind == "int":
        return to_attr(kind, parser.parse_integer(False))
    if kind == "float":
        if parser.parse_optional_punctuation("-") is not None:
            if parser.parse_optional_keyword("inf"):
                return to_attr(kind, float("-inf"))
            return to_attr(kind, -parser.parse_number())
        if parser.parse_optional_keyword("inf"):
            return to_attr(kind, float("inf"))
        return to_attr(kind, parser.parse_number())
    if kind == "bool":
        b = parser.parse_optional_boolean()
        if b is None:
            parser.raise_error(f"attribute '{key}' expects true or false", pos)
        return to_attr(kind, b)
    if kind == "str":
        s = parser.parse_optional_str_literal()
        if s is None:
            parser.raise_error(f"attribute '{key}' expects a string literal", pos)
        return to_attr(kind, s)
    raise AssertionError(kind)


def _group_operands(od: OpDef, values: Sequence[SSAValue], parser: Parser | None = None, pos=None):
    req = sum(1 for o in od.operands if o.kind == "tensor")
    n_opt = sum(1 for o in od.operands if o.kind == "optional")
    has_var = any(o.kind == "variadic" for o in od.operands)
    if len(values) < req or (not has_var and len(values) > req + n_opt):
        want = f"{req}" if not n_opt and not has_var else (f"at least {req}" if has_var else f"{req} to {req + n_opt}")
        msg = (f"'graph.{od.name}' expects {want} operand(s) "
               f"({', '.join(o.name + ('?' if o.kind == 'optional' else '...' if o.kind == 'variadic' else '') for o in od.operands)}), "
               f"got {len(values)}")
        if parser is not None:
            parser.raise_error(msg, pos)
        raise ValueError(msg)
    slots = [o for o, _ in optable.operand_slots(od, len(values))]
    groups: list = []
    for o in od.operands:
        mine = [v for v, so in zip(values, slots) if so is o]
        groups.append(mine[0] if o.kind == "tensor" else mine)
    return groups


# ------------------------------------------------------------ generation


def _class_name(name: str) -> str:
    return "".join(p.capitalize() for p in name.split("_")) + "Op"


def _make_op(od: OpDef) -> type[GraphOp]:
    ns: dict[str, Any] = {"name": f"graph.{od.name}", "OPDEF": od, "__annotations__": {"OPDEF": ClassVar[OpDef]}}
    doc = [f"graph.{od.name}: {od.summary}.", ""]
    if od.example:
        doc += ["Example::", "", "    " + od.example, ""]
    if od.layout:
        doc.append("Meaning: outside the tensor-comprehension notation (layout / constant).")
    ns["__doc__"] = "\n".join(doc)
    n_var = 0
    for o in od.operands:
        if o.kind == "tensor":
            ns[o.name] = operand_def(TensorType)
        elif o.kind == "optional":
            ns[o.name] = opt_operand_def(TensorType)
            n_var += 1
        else:
            ns[o.name] = var_operand_def(TensorType)
            n_var += 1
    if n_var > 1:
        ns["irdl_options"] = (AttrSizedOperandSegments(as_property=True),)
    if od.results == "variadic":
        ns["outs"] = var_result_def(TensorType)
    else:
        ns["result"] = result_def(TensorType)
    for k in od.attrs:
        ns[k] = opt_prop_def(Attribute)
    if od.name == "constant":
        ns["value"] = opt_prop_def(Attribute)
    ns["traits"] = traits_def(Pure())
    cls = type(_class_name(od.name), (GraphOp,), ns)
    cls.__module__ = __name__
    return irdl_op_definition(cls)


GRAPH_OPS: dict[str, type[GraphOp]] = {name: _make_op(od) for name, od in OPS.items()}
globals().update({cls.__name__: cls for cls in GRAPH_OPS.values()})


def build(name: str, operands: Sequence[SSAValue], result_types: Sequence[Attribute], **attrs: Any) -> GraphOp:
    """Build a graph op by table name, with Python attribute values."""
    cls = GRAPH_OPS[name]
    od = cls.OPDEF
    props = {}
    for k, v in attrs.items():
        if k not in od.attrs:
            if name == "constant" and k == "value":
                props[k] = v
                continue
            raise KeyError(f"graph.{name} has no attribute {k!r}")
        if v is None:
            continue
        props[k] = to_attr(od.attrs[k].kind, v)
    groups = _group_operands(od, list(operands))
    rt = [list(result_types)] if od.results == "variadic" else list(result_types)
    return cls.build(operands=groups, result_types=rt, properties=props)


def infer_result_types(name: str, operand_types: Sequence[Attribute], result_dtype: Attribute | None = None,
                       **attrs: Any) -> list[TensorType]:
    """Result tensor types of an op from its operand types (for builders / the importer)."""
    od = OPS[name]
    full = {k: spec.default for k, spec in od.attrs.items()}
    full.update({k: v for k, v in attrs.items() if v is not None})
    shapes = optable.infer(od, [shape_of(t) for t in operand_types], full, [])
    if result_dtype is None:
        rule = od.result_dtype
        if rule == "bool":
            result_dtype = IntegerType(1)
        elif rule.startswith("operand:"):
            oname = rule.split(":", 1)[1]
            i = next(i for i, n in enumerate(optable.flat_operand_names(od, len(operand_types)))
                     if n == oname or n.startswith(oname + "#"))
            result_dtype = operand_types[i].get_element_type()
        else:
            result_dtype = operand_types[0].get_element_type()
    return [TensorType(result_dtype, [DYNAMIC_INDEX if d == DYN else d for d in s]) for s in shapes]


Graph = Dialect("graph", list(GRAPH_OPS.values()), [])
