"""kitsune-opt: xdsl-opt with the Kitsune dialects and passes registered next to xDSL's own."""

from __future__ import annotations

import sys
from io import StringIO
from typing import IO

from xdsl.xdsl_opt_main import xDSLOptMain

from kitsune.context import kitsune_dialects
from kitsune.passes import ALL_PASSES
from kitsune.tools.diagnostics import run_with_diagnostics


def _pass_summary() -> str:
    lines = ["Kitsune passes (-p NAME or -p 'NAME{option=value}'):"]
    for name, factory in ALL_PASSES.items():
        cls = factory()
        # the docstring's first paragraph, on one line
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        lines.append(f"  {name:28s} {doc}")
    return "\n".join(lines)


class KitsuneOptMain(xDSLOptMain):
    def __init__(self, args=None):
        self._buffer: StringIO | None = None
        super().__init__(description="Kitsune modular optimizer driver.", args=args)

    def register_all_arguments(self, arg_parser):
        import argparse

        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        super().register_all_arguments(arg_parser)
        # The pass list imports every pass module: build it only when help is printed.
        format_help = arg_parser.format_help

        def format_help_with_passes() -> str:
            arg_parser.description = "Kitsune modular optimizer driver.\n\n" + _pass_summary()
            return format_help()

        arg_parser.format_help = format_help_with_passes

    def register_all_dialects(self):
        super().register_all_dialects()
        for d in kitsune_dialects():
            if d.name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(d.name, lambda d=d: d)

    def register_all_passes(self):
        super().register_all_passes()
        for name, factory in ALL_PASSES.items():
            self.register_pass(name, factory)

    def register_all_targets(self):
        super().register_all_targets()
        try:
            from kitsune.codegen import TARGETS  # type: ignore

            for name, factory in TARGETS.items():
                self.available_targets[name] = factory
        except ImportError:
            pass

    def parse_chunk(self, chunk, file_extension, start_offset=0):
        from io import BytesIO

        from xdsl.dialects.builtin import ModuleOp
        from xdsl.utils.exceptions import DiagnosticException

        data = chunk.read()
        name = self.args.input_file or "<stdin>"
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = data[:e.start].count(b"\n") + 1 + start_offset
            col = e.start - (data.rfind(b"\n", 0, e.start) + 1) + 1
            raise DiagnosticException(f"{name}:{line}:{col}: byte 0x{data[e.start]:02x} is not UTF-8 text: the "
                                      "input is not an MLIR file") from None
        if not "".join(ln for ln in text.splitlines() if not ln.lstrip().startswith("//")).strip():
            return ModuleOp([])  # an empty file is an empty module (as in mlir-opt)
        chunk = BytesIO(data)
        # With --split-input-file the parser sees one chunk at a time: shift the
        # graph ops' file:line:col locations so diagnostics name the line in the file.
        module = super().parse_chunk(chunk, file_extension, start_offset)
        if module is not None and start_offset:
            from xdsl.dialects.builtin import FileLineColLoc, IntAttr

            for op in module.walk():
                loc = op.location
                if isinstance(loc, FileLineColLoc):
                    op.location = FileLineColLoc(loc.filename, IntAttr(loc.line.data + start_offset), loc.column)
        return module

    def prepare_output(self) -> IO[str]:
        # Write the output file only once everything succeeded: nothing half-written.
        if self.args.output_file is None:
            return sys.stdout
        self._buffer = _KeptStringIO()
        return self._buffer

    def run(self):
        self._buffer = None
        super().run()
        if self._buffer is not None:
            with open(self.args.output_file, "w") as f:
                f.write(self._buffer.getvalue())


class _KeptStringIO(StringIO):
    def close(self):  # xdsl-opt closes the stream; keep the text until success
        pass


def main(argv: list[str] | None = None) -> int:
    return run_with_diagnostics(lambda: KitsuneOptMain(args=argv).run(), "kitsune-opt")


if __name__ == "__main__":
    sys.exit(main())
