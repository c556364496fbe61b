# session 33, call K: as shipped: the gemm template's GPU tests (packed weights included); the MLPs with the tuning
# database off (KITSUNE_TUNING_DB=0: heuristic defaults, packed weights) and on, for bench/kernels/heuristic_ratio.py
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py -p no:cacheprovider 2>&1 | tail -2
KITSUNE_TUNING_DB=0 timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session33-db0-mlp.json 2>&1 | grep -E "^mlp" | sed "s/^/db0: /"
timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session33-db1-mlp.json 2>&1 | grep -E "^mlp" | sed "s/^/db1: /"
