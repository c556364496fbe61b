"""Kitsune: PyTorch models (torch.export) -> GPU dataflow programs, on xDSL.

``import kitsune`` stays cheap: the importer (and torch) load on first use.
"""


def import_module(model, example_inputs, dynamic_shapes=None, **kw):
    """torch.export + import: ``(graph-dialect module, weights name -> numpy)``.

    See ``kitsune.frontend.torch_export.import_module``.
    """
    from kitsune.frontend.torch_export import import_module as _impl

    return _impl(model, example_inputs, dynamic_shapes, **kw)


def import_exported(ep, **kw):
    """An ``ExportedProgram`` -> ``(graph-dialect module, weights)``; see ``kitsune.frontend.torch_export``."""
    from kitsune.frontend.torch_export import import_exported as _impl

    return _impl(ep, **kw)


def interpret(module, inputs, fn="main"):
    """Run function ``fn`` of a module through the numpy reference interpreter.

    See ``kitsune.interpreter.interpret``.
    """
    from kitsune.interpreter import interpret as _impl

    return _impl(module, inputs, fn)


def parse(text, name="<string>"):
    """Parse and verify MLIR text with every Kitsune dialect (``kitsune.context.parse_module``)."""
    from kitsune.context import parse_module

    return parse_module(text, name)


def compile(model, example_inputs, mode="dataflow", gpu="h100", **kw):
    """Compile a PyTorch model into a callable running Kitsune's generated Triton program.

    ``kitsune.compile(model, example_inputs, mode="dataflow", gpu="h100", *, device=None,
    cuda_graph=False, debug=None, index_checks=True)``; the result takes the model's inputs, returns its
    outputs and has ``.report()``, ``.source``, ``.lowered`` and ``.check_errors()`` (out-of-range indices
    raise ``KitsuneIndexError``: on a GPU at a later call or there). See ``kitsune.compile`` (the module).
    """
    from kitsune.compile import compile as _impl

    return _impl(model, example_inputs, mode, gpu, **kw)


def explain(model, *inputs, **kw):
    """Run ``torch.compile(model, backend="kitsune")`` once on ``inputs`` and list per graph what Kitsune
    compiled and what fell back to Inductor (with the reason and the op's source line), and Dynamo's graph
    breaks. See ``kitsune.backend.explain``."""
    from kitsune.backend import explain as _impl

    return _impl(model, *inputs, **kw)
