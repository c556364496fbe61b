"""Front ends: PyTorch (``torch.export``) to the graph dialect.

``torch`` is imported lazily: ``import kitsune.frontend`` stays cheap.
"""

from __future__ import annotations

__all__ = ["import_module", "import_exported", "UnsupportedOpsError", "KitsuneImportError"]


def __getattr__(name: str):
    if name in __all__:
        from kitsune.frontend import torch_export

        return getattr(torch_export, name)
    raise AttributeError(f"module 'kitsune.frontend' has no attribute {name!r}")
