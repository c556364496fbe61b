# Session 24, call C: the harness with the tuned launch settings (issue 14's three, issue 16's three), then 1000
# replays of llama_decode_b1 dataflow.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 420 python -m kitsune.bench --workloads llama_decode_b1,llama_decode_b8,llama1b_decode_b1,mgn_10k,dlrm_b2048,inception_b8 --peers inductor_graph --json $OUT/h100-2026-11-26-session24-pdl.json 2>&1 | grep -v -i warn | tail -30
timeout 120 python bench/kernels/replay_check.py llama_decode_b1 --mode dataflow --n 1000 --tol 0 2>&1 | tail -4
timeout 150 python bench/kernels/replay_check.py llama1b_decode_b1 --mode dataflow --n 1000 --tol 0 2>&1 | tail -4
