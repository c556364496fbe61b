# session 32, call B: why T256's fc1 split in two K parts at 128 x 192 (128 CTAs, call A: 80.8 us) runs 11 us behind
# fc2 at 128 x 192 unsplit (128 CTAs of the same work: 69.4): (1) the work items ordered part-major (adjacent
# programs: the two row blocks of one K part, reading the same W block, as fc2's) against tile-major (base,
# 11e2293), the tuner A/B/A/B; (2) ncu (full set, clocks not locked) of both kernels in one replay of T256 with
# the split forced for fc1; (3) more M = 1 gemv program shapes at 8 warps on llama_decode_b1
source bench/kernels/device_env.sh
base_tree
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for r in 1 2; do
  for t in new base; do
    d=/tmp/w; [ $t = base ] && d=/tmp/wb
    in_tree $d $t timeout 120 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 \
      --only "SPLIT=2;GLUON=2;BN=192;stages=5" --max-candidates 4 --db $OUT/db-$t-$r.json \
      --json $OUT/tune-order-$t-$r.jsonl > $OUT/tune-order-$t-$r.log 2>&1
    echo "== $t $r"; python3 bench/kernels/tune_summary.py $OUT/tune-order-$t-$r.jsonl | grep linear_0
  done
done
mkdir -p /tmp/kc-ncu && cp $ROOT/.whl/s32-split-db.json /tmp/kc-ncu/tuning.json
KITSUNE_CACHE_DIR=/tmp/kc-ncu timeout 300 ncu --clock-control none --profile-from-start off --set full \
  python3 -m kitsune.bench --_ncu mlp_gpt3_T256 --_ncu-target kitsune:bulk-sync > $OUT/ncu-t256-split-session32.txt 2>&1
grep -E "^  k[0-9]|Duration|DRAM Throughput|L2 Cache Throughput|Compute \(SM\) Throughput|L2 Hit Rate|Memory Throughput  |Executed Ipc A|One or More Eligible|Registers Per|Grid Size|Block Size" $OUT/ncu-t256-split-session32.txt | head -40
timeout 200 python3 bench/kernels/run.py --workloads llama_decode_b1 --no-default \
  --extra "template=gemv,M=1:BN=1,BK=8192,warps=8,PER_ITEM=True" --extra "template=gemv,M=1:BN=2,BK=8192,warps=8,PER_ITEM=True" \
  --extra "template=gemv,M=1:BN=2,BK=2048,warps=8,PER_ITEM=True" --extra "template=gemv,M=1:BN=2,BK=4096,warps=4,PER_ITEM=True" \
  --extra "template=gemv,M=1:BN=1,BK=4096,warps=8,PER_ITEM=True" --extra "template=gemv,M=1:BN=2,BK=4096,warps=16,PER_ITEM=True" \
  --extra "template=gemv,M=1:BN=2,BK=4096,warps=8,PER_ITEM=True" \
  --json $OUT/kernels-gemv-b1-shapes-session32-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -40
