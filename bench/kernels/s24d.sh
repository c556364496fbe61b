# Session 24, call D: compute-sanitizer memcheck / racecheck on the decode programs in dataflow mode with the tuned
# launch (PDL 1, loads before waits), then the harness on the rest of the suite.
source bench/kernels/device_env.sh
for w in llama_decode_b1 llama1b_decode_b1; do
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 120 compute-sanitizer --tool memcheck python3 -m kitsune.bench --sanitize $w --modes dataflow 2>&1 | grep -v -i warn | tail -3 | tee $OUT/memcheck-$w.txt
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 150 compute-sanitizer --tool racecheck python3 -m kitsune.bench --sanitize $w --modes dataflow 2>&1 | grep -v "^=========     \|^  \|Warn" | tail -6 | tee $OUT/racecheck-$w.txt
done
timeout 250 python -m kitsune.bench --workloads mlp_gpt3_T256,nerf_65k,bench/models/llama_inplace.py:b1,bench/models/llama_inplace.py:b8 --peers inductor_graph --json $OUT/h100-2026-11-26-session24-pdl-b.json 2>&1 | grep -v -i warn | grep -v "per kernel" | tail -14
