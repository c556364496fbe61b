# session 40, call A: where a GPT-3 MLP replay's time goes beyond its kernels' own (the profiler's per-kernel sum was
# 394 us against 445 a replay, T1024 dataflow, session 39): flush_probe.py --timeline, Kitsune and Inductor + CUDA
# graph in one process, both modes.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in bulk-sync dataflow; do
  timeout 250 python3 bench/kernels/flush_probe.py --workloads mlp_gpt3_T1024,mlp_gpt3_T256 --mode $m --timeline \
    --out "$OUT/$GPU-$(date -u +%F)-session40-a-flush-$m.json" 2>&1 | grep -v -i "warn" | grep -E "mlp|rror|Trace" | cut -c1-400
done
