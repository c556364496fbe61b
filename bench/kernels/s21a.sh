# session 21, first call: where inception_b8's time goes (kernel timeline with stream overlap), both modes
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 bench/kernels/plan_breakdown.py --workloads inception_b8 --mode bulk-sync --peer --json $OUT/pb-bulk.json 2>&1 | grep -v Warning
timeout 150 python3 bench/kernels/plan_breakdown.py --workloads inception_b8 --mode dataflow --json $OUT/pb-df.json 2>&1 | grep -v Warning
KITSUNE_BRANCHES=1 timeout 150 python3 bench/kernels/plan_breakdown.py --workloads inception_b8 --mode bulk-sync --json $OUT/pb-bulk1.json 2>&1 | grep -v Warning
python3 - <<'P'
import json, os
for f in ("pb-bulk.json", "pb-df.json", "pb-bulk1.json"):
    for rec in json.load(open(os.path.join(os.environ["OUT"], f))):
        t0 = rec["kernels"][0]["start"]
        print(f, rec["mode"], rec["placement"], "replay", round(rec["replay_ms"] * 1e3, 1))
        for r in rec["kernels"]:
            print(f"   {r['start'] - t0:7.1f} .. {r['end'] - t0:7.1f}  {r['name']}")
        if rec.get("peer"):
            t0 = rec["peer"]["kernels"][0]["start"]
            for r in rec["peer"]["kernels"]:
                print(f"   peer {r['start'] - t0:7.1f} .. {r['end'] - t0:7.1f}  {r['name']}")
P
