# session 30, call K: the harness on the GPT-3 MLPs with the packaged database as shipped (T256's fc1 the
# warp-specialised Gluon form at 7 stages, its result through the ring), Inductor + CUDA graph beside them.
source bench/kernels/device_env.sh
timeout 280 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph --json $OUT/h100-2026-11-27-session30-mlp-b.json 2>&1 | grep -E "^mlp_gpt3|k[0-9]"
