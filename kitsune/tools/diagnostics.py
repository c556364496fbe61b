"""Turn the exceptions of parsing, verification and passes into one-line
diagnostics (file:line:col: error: ...) and exit code 1, never a traceback."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

from xdsl.utils.exceptions import DiagnosticException, ParseError, PassFailedException, VerifyException


def report(e: BaseException, prog: str) -> str:
    if isinstance(e, ParseError):
        return str(e).rstrip() + "\n" + f"{prog}: error: the input is not valid MLIR (see above)"
    if isinstance(e, VerifyException):
        return f"{prog}: error: {e}".rstrip()
    if isinstance(e, DiagnosticException):
        return f"{prog}: error: {e}".rstrip()
    if isinstance(e, FileNotFoundError):
        return f"{prog}: error: no such file: {e.filename}"
    return f"{prog}: error: {type(e).__name__}: {e}".rstrip()


def run_with_diagnostics(main: Callable[[], int | None], prog: str) -> int:
    """Run ``main``; known failures print a diagnostic and return 1.

    KITSUNE_TRACEBACK=1 re-raises (for developers).
    """
    try:
        rc = main()
        return int(rc or 0)
    except SystemExit as e:
        return int(e.code) if isinstance(e.code, int) else (0 if e.code is None else 1)
    except KeyboardInterrupt:
        return 130
    except BaseException as e:  # noqa: BLE001
        if os.environ.get("KITSUNE_TRACEBACK"):
            raise
        print(report(e, prog), file=sys.stderr)
        return 1


__all__ = ["report", "run_with_diagnostics", "PassFailedException"]
