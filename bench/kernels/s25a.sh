# Session 25, call 1: loop peeling (the first iteration's reads before the wait) and split-K kernels in the early
# form, A/B against the session's base tree (ABA), and the decode attention's parts measured in the launch.
ROOT=$PWD
source bench/kernels/device_env.sh
mkdir -p /tmp/wb && tar -xf $ROOT/.whl/base.tar -C /tmp/wb
W=llama_decode_b8,llama_decode_b1,dlrm_b2048,inception_b8
run_ab() {  # $1: tree, $2: label
  (cd $1 && PYTHONPATH=/tmp/site:$1:$1/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc_$2 timeout 280 python bench/kernels/pdl_ab.py --workloads $W --settings 0,1,2 --rounds 3 --out $OUT/pdl-ab-$2.json 2>&1 | grep -v -i warn)
}
echo "== base"; run_ab /tmp/wb base
echo "== new"; run_ab /tmp/w new
echo "== base again"; run_ab /tmp/wb base2
echo "== parts"
timeout 200 python bench/kernels/attn_parts_ab.py --workloads llama_decode_b1,llama_decode_b8 --parts 0,5,25,41 --rounds 3 --out $OUT/attn-parts.json 2>&1 | grep -v -i warn
