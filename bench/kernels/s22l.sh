# session 22, twelfth call: where llama1b_decode_b1's time goes after the re-tune (plan breakdown, bulk-sync)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc12 PYTHONUNBUFFERED=1
timeout 200 python3 bench/kernels/plan_breakdown.py --workloads llama1b_decode_b1 --mode bulk-sync --json $OUT/pb-llama1b.json 2>&1 | grep -v Warn | grep -v "^    "
python3 - <<'PY'
import json, os, collections
d = json.load(open(os.environ["OUT"] + "/pb-llama1b.json"))[0]
ks = d["kernels"]
print("kernels", len(ks), "sum", round(d["kernel_sum_us"], 1), "span", round(d["span_us"], 1))
gaps = sum(k["gap_us"] for k in ks)
print("gaps", round(gaps, 1))
for k in ks[:14]:
    print(f"{k['name'][:40]:40s} {k['us']:7.1f} gap {k['gap_us']:5.1f}")
for k in ks[-4:]:
    print(f"{k['name'][:40]:40s} {k['us']:7.1f} gap {k['gap_us']:5.1f}")
PY
