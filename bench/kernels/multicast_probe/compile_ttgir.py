import sys, triton
from triton.backends.compiler import GPUTarget
ck = triton.compile(sys.argv[1], target=GPUTarget("cuda", 90, 32))
ptx = ck.asm["ptx"]
open(sys.argv[1] + ".ptx", "w").write(ptx)
for l in ptx.splitlines():
    if "cp.async.bulk.tensor" in l or "cluster" in l: print(l.strip())
