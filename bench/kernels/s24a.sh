# Session 24, call A: loads before waits (early_loads) under PDL 0 / 2 / 1 on decode, HEAD's PDL for comparison,
# PDL 2 on the other workloads (is it a default?).
SRC=$PWD
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
python bench/kernels/pdl_ab.py --workloads llama_decode_b1,llama_decode_b8,llama1b_decode_b1 --settings 0,2,1 --rounds 3 --out $OUT/pdl-early-decode.json 2>&1 | grep -v Warning
mkdir -p /tmp/h && tar -xf $SRC/.whl/head.tar -C /tmp/h
(cd /tmp/h && PYTHONPATH=/tmp/site:/tmp/h:/tmp/h/bench/kernels KITSUNE_CACHE_DIR=/tmp/kch timeout 200 python bench/kernels/pdl_ab.py --workloads llama_decode_b1,llama_decode_b8,llama1b_decode_b1 --settings 0,2 --rounds 3 --out $OUT/pdl-head-decode.json 2>&1 | grep -v Warning)
timeout 200 python bench/kernels/pdl_ab.py --workloads mlp_gpt3_T1024,inception_b8,mgn_10k,dlrm_b2048,nerf_65k,mlp_gpt3_T256 --settings 0,2 --rounds 3 --out $OUT/pdl-early-others.json 2>&1 | grep -v Warning
