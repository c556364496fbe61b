# session 32, call D: (1) GPU tests (the Gluon gemm's split part-major; the chain's host descriptors); (2) nerf_65k
# with the chain's descriptors from the host (new) against made in the kernel (base, 33e8fed), alternated twice;
# (3) llama_decode_b1's gemvs over the 8-warp row forms, tuned in their program, then the harness (the packaged
# database alone, then with the winners) and the kernel table with the winners
source bench/kernels/device_env.sh
base_tree
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py test/unit/test_chain.py -p no:cacheprovider -k "split or chain or tma" 2>&1 | tail -2
for r in 1 2; do
  for t in base new; do
    d=/tmp/w; [ $t = base ] && d=/tmp/wb
    in_tree $d $t timeout 150 python3 -m kitsune.bench --workloads nerf_65k --peers inductor_graph \
      --json $OUT/nerf-desc-$t-$r-session32-h100-2026-11-27.json | grep -E "^nerf" | sed "s/^/$t $r: /"
  done
done
mkdir -p /tmp/kc-b1
KITSUNE_CACHE_DIR=/tmp/kc-b1 timeout 300 python3 -m kitsune.tools.tune --in-program --workload llama_decode_b1 \
  --modes bulk-sync --only "warps=8;PER_ITEM=1" --max-candidates 6 --db /tmp/kc-b1/tuning.json \
  --json $OUT/tune-b1-rows-session32.jsonl > $OUT/tune-b1-rows.log 2>&1
tail -3 $OUT/tune-b1-rows.log; python3 bench/kernels/tune_summary.py $OUT/tune-b1-rows-session32.jsonl
cp /tmp/kc-b1/tuning.json $OUT/db-b1-rows.json 2>/dev/null
in_tree /tmp/w pk timeout 150 python3 -m kitsune.bench --workloads llama_decode_b1 --peers inductor_graph \
  --json $OUT/b1-packaged-session32.json | grep -E "^llama" | sed "s/^/packaged: /"
in_tree /tmp/w b1 timeout 150 python3 -m kitsune.bench --workloads llama_decode_b1 --peers inductor_graph \
  --json $OUT/b1-rows-session32.json | grep -E "^llama" | sed "s/^/rows: /"
in_tree /tmp/w b1 timeout 200 python3 bench/kernels/run.py --workloads llama_decode_b1 --no-default \
  --json $OUT/kernels-b1-rows-session32-h100-2026-11-27.json | grep -A12 "^workload"
