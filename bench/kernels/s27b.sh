# Session 27, device call B: the gemv template's weight-first tensor-core form (SWAP) in llama_decode_b8.
# (1) in-program tuning of b8's four M = 8 projections among SWAP candidates (each against the shipped config,
# kept only where faster); (2) the harness on b8 with the packaged database and with the winners, Inductor + CUDA
# graph beside each; (3) heuristic defaults (KITSUNE_TUNING_DB=0), the tree before (base) and after.
ROOT=$PWD
source bench/kernels/device_env.sh
mkdir -p /tmp/wb && tar -xf $ROOT/.whl/base.tar -C /tmp/wb
mkdir -p /tmp/kc-swap /tmp/kc-pkg
KITSUNE_CACHE_DIR=/tmp/kc-swap timeout 330 python -m kitsune.tools.tune --in-program --workload llama_decode_b8 \
  --modes bulk-sync --only "SWAP=1;BK=64,128" --max-candidates 5 --json $OUT/tune-swap-b8.jsonl 2>&1 \
  | grep -v "^\s*\[" | grep -v -i "warn" | tail -12
cp /tmp/kc-swap/tuning.json $OUT/tuning-swap.json 2>/dev/null
python - <<'PY'
import json, os
for ln in open(os.environ["OUT"] + "/tune-swap-b8.jsonl"):
    r = json.loads(ln)
    print(r["task"], r["problem"].split(",")[1:4], "incumbent", r["incumbent_us"], "->", r["us"], r["config"])
    for c, v in sorted(r["candidates"].items(), key=lambda x: x[1])[:3]:
        print("    ", v, c)
    if r["errors"]:
        print("    errors", r["errors"])
PY
for C in pkg swap; do
  echo "== harness $C"
  KITSUNE_CACHE_DIR=/tmp/kc-$C timeout 110 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph \
    --json $OUT/b8-$C.json 2>&1 | grep -v -i warn | grep -E "^llama_decode_b8 |per kernel" | tail -4
done
for T in base new; do
  D=/tmp/w; [ $T = base ] && D=/tmp/wb
  echo "== heuristic $T"
  (cd $D && PYTHONPATH=/tmp/site:$D:$D/bench/kernels KITSUNE_TUNING_DB=0 KITSUNE_CACHE_DIR=/tmp/kc-h$T timeout 100 \
    python -m kitsune.bench --workloads llama_decode_b8 --modes bulk-sync --peers '' --json $OUT/b8-db0-$T.json 2>&1 \
    | grep -v -i warn | grep -E "^llama_decode_b8 |per kernel" | tail -3)
done
