# Session 26, device call F: llama_decode_b8's gemv configs tuned inside their program (kitsune-tune --in-program,
# bulk-sync, 6 candidates a task), then the harness on b8 with the packaged database alone and with the in-program
# winners, Inductor + CUDA graph beside each.
ROOT=$PWD
source bench/kernels/device_env.sh
mkdir -p /tmp/kc-inprog /tmp/kc-base
KITSUNE_CACHE_DIR=/tmp/kc-inprog timeout 300 python -m kitsune.tools.tune --in-program --workload llama_decode_b8 \
  --modes bulk-sync --max-candidates 6 --json $OUT/tune-in-program-b8.jsonl 2>&1 | grep -v -i warn | grep -v "^\s*\[" | tail -8
cp /tmp/kc-inprog/tuning.json $OUT/tuning-inprog.json 2>/dev/null
for C in base inprog; do
  echo "== $C"
  KITSUNE_CACHE_DIR=/tmp/kc-$C timeout 110 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph \
    --json $OUT/b8-$C.json 2>&1 | grep -v -i warn | grep -E "^llama_decode_b8 |per kernel" | tail -4
done
