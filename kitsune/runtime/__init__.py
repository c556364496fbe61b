"""The Kitsune runtime: load generated Triton programs and run them (see ``kitsune.runtime.program``)."""

from kitsune.runtime.program import (
    DEFAULT_WATCHDOG,
    InputError,
    KitsuneRuntimeError,
    Program,
    cache_dir,
    load_source,
    resolve_device,
    uses_interpreter,
)

__all__ = ["Program", "KitsuneRuntimeError", "InputError", "load_source", "cache_dir", "resolve_device",
           "uses_interpreter", "DEFAULT_WATCHDOG"]
