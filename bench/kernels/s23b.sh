# session 23, second call: mgn_10k with two-layer chains formed (the edge MLP as one gemm task whose first
# layer is a prologue, the node MLP as a chain): breakdown before / after, tuned, then the harness
. bench/kernels/device_env.sh
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --peer --json $OUT/pb-ml3.json 2>&1 | grep -v Warning | head -12
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --chain-min-layers 2 --json $OUT/pb-ml2.json 2>&1 | grep -v Warning | head -10
timeout 300 python3 - <<'PY' 2>&1 | grep -v Warning | tail -25
import os, sys
sys.path.insert(0, "bench/kernels")
from chain_ab import patched_chains
from kitsune.tools.tune import main
with patched_chains(True, chain_min_layers=2):
    main(["--workload", "mgn_10k", "--json", os.environ["OUT"] + "/tune-ml2.jsonl"])
PY
cp /tmp/kc/tuning.json $OUT/tuning-ml2.json
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --chain-min-layers 2 --json $OUT/pb-ml2-tuned.json 2>&1 | grep -v Warning | head -10
