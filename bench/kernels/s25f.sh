# Session 25, call 6: short loops without products unrolled (tl.static_range: their chunks' loads issued
# together), A/B against the committed tree (ABA), PDL 1 and 2.
ROOT=$PWD
source bench/kernels/device_env.sh
mkdir -p /tmp/wb && tar -xf $ROOT/.whl/base.tar -C /tmp/wb
W=llama_decode_b1,llama_decode_b8,dlrm_b2048,llama1b_decode_b1
run_ab() {  # $1: tree, $2: label
  (cd $1 && PYTHONPATH=/tmp/site:$1:$1/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc_$2 timeout 200 python bench/kernels/pdl_ab.py --workloads $W --settings 1,2 --rounds 3 --out $OUT/pdl-ab-$2.json 2>&1 | grep -v -i "warn\|cls.__new")
}
echo "== base"; run_ab /tmp/wb base
echo "== unrolled"; run_ab /tmp/w unrolled
echo "== base again"; run_ab /tmp/wb base2
