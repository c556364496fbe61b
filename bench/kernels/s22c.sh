# session 22, third call: mgn_10k with the GEMM + LayerNorm tasks on the gemm template (the tile spans the row), after the anchor fix (the edge GEMM with its gathered epilogue on the gemm
# template) and the tuner forming tasks as the pipeline does: tune, harness, breakdown
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc3 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc3
timeout 120 python3 -m kitsune.bench --workloads mgn_10k --modes bulk-sync --peers inductor_graph --json $OUT/bench-mgn-untuned.json 2>&1 | grep -E "^mgn|rror|Traceback" | tail -4
timeout 200 python3 -m kitsune.tools.tune --workload mgn_10k --max-candidates 14 --db /tmp/kc3/tuning.json --json $OUT/tune-mgn.json 2>&1 | grep -v Warn | grep "best\|rror" | tail -8
cp /tmp/kc3/tuning.json $OUT/tune-db.json
timeout 150 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^mgn|rror|Traceback" | tail -4
timeout 120 python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-mgn.json 2>&1 | grep -v Warn | grep -v "^  "
python3 - <<'PY'
import json, os
d = json.load(open(os.environ["OUT"] + "/pb-mgn.json"))
for w in d:
    print(" ".join(f"{k['name'][:12]}={k['us']:.1f}" for k in w["kernels"]))
PY
