# session 30, call G: the harness on the GPT-3 MLPs with the packaged database as shipped (T256's fc1 now the
# warp-specialised Gluon form at 6 stages), Inductor + CUDA graph beside them; no user database.
source bench/kernels/device_env.sh
timeout 280 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph --json $OUT/h100-2026-11-27-session30-mlp.json 2>&1 | grep -E "^mlp_gpt3|k[0-9]"
