# Session 29, device call D: the down projection alone (issue 11's gemv >= 80% of 3.0 TB/s: M = 1 at 77%, M = 8 at
# 69%) at configs outside the space (1-2 columns a program, K split in 2 / 4 over 4-column programs) and the skinny
# probe's best weight-first configs for M = 8, next to the used ones (run.py --extra).
source bench/kernels/device_env.sh
E=()
for c in "BN=2,BK=2048,PER_ITEM=True" "BN=1,BK=2048,PER_ITEM=True" "BN=2,BK=4096,PER_ITEM=True" \
         "BN=1,BK=8192,PER_ITEM=True" "BN=8,BK=1024,PER_ITEM=True" "BN=4,BK=2048,SPLIT=2,PER_ITEM=False" \
         "BN=4,BK=2048,SPLIT=4,PER_ITEM=False"; do E+=(--extra "M=1,K=8192:$c"); done
for c in "BN=64,BK=128,SPLIT=2,stages=6" "BN=64,BK=128,SPLIT=4,stages=4" "BN=64,BK=256,SPLIT=2,stages=3" \
         "BN=64,BK=64,SPLIT=4,stages=6"; do E+=(--extra "M=8,K=8192:$c"); done
timeout 280 python bench/kernels/run.py --workloads llama_decode_b1,llama_decode_b8 --no-default "${E[@]}" \
  --json $OUT/kernels-down-extra.json 2>&1 | grep -v -i warn | grep -v '^{' | tail -30
