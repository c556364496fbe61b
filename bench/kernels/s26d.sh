# Session 26, device call D: heuristic defaults (KITSUNE_TUNING_DB=0) on all eight workloads, both modes, with
# placement=auto's new rule (a temporal kernel only where 1.2x its estimate beats kernels of their own), and the
# tuned database on the three workloads call C did not cover.
ROOT=$PWD
source bench/kernels/device_env.sh
KITSUNE_TUNING_DB=0 KITSUNE_CACHE_DIR=/tmp/kc-d0 timeout 420 python -m kitsune.bench --workloads mlp_gpt3_T1024,mlp_gpt3_T256,llama_decode_b1,llama_decode_b8,dlrm_b2048,nerf_65k,mgn_10k,inception_b8 --peers '' \
  --json $OUT/db0-all.json 2>&1 | grep -v -i warn | grep -v "return cls" | tail -30
KITSUNE_TUNING_DB=1 KITSUNE_CACHE_DIR=/tmp/kc-d1 timeout 170 python -m kitsune.bench --workloads nerf_65k,dlrm_b2048,inception_b8 --peers '' \
  --json $OUT/db1-nerf_dlrm_inception.json 2>&1 | grep -v -i warn | grep -v "return cls" | tail -12
