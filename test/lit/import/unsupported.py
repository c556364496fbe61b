# Every unsupported op is reported at once, with its source line; exit 1, no output file.
# RUN: rm -f %t.mlir %t.npz
# RUN: not kitsune-import %S/inputs/unsupported.py -o %t.mlir --weights %t.npz 2> %t.err
# RUN: filecheck %s < %t.err
# RUN: not test -e %t.mlir
# RUN: not test -e %t.npz

# CHECK: kitsune-import: error: 2 unsupported ops in the exported graph:
# CHECK-NEXT: inputs/unsupported.py:8:9: error: unsupported op aten.topk.default: no mapping to the graph dialect
# CHECK-NEXT: a = torch.topk(x, 2, dim=1).values
# CHECK-NEXT: inputs/unsupported.py:10:9: error: unsupported op aten.flip.default: no mapping to the graph dialect
# CHECK-NEXT: c = torch.flip(b, dims=[0])
# CHECK-NOT: Traceback
