# session 32, call A: the Gluon gemm's split K, published by the first part only (and the last part 2 K steps
# longer): GPU tests, then the tuner on T256 over the split configs (the incumbents in the race); the gemv
# kernels of both decode layers at 8 warps and wider programs (run.py --extra), next to the torch op
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py -p no:cacheprovider -k "split" 2>&1 | tail -3
timeout 200 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --only "SPLIT=2;GLUON=2" \
  --max-candidates 7 --db $OUT/db.json --json $OUT/tune-t256-split.jsonl > $OUT/tune-t256-split.log 2>&1
tail -2 $OUT/tune-t256-split.log
python3 bench/kernels/tune_summary.py $OUT/tune-t256-split.jsonl
timeout 240 python3 bench/kernels/run.py --workloads llama_decode_b1,llama_decode_b8 --no-default \
  --extra "template=gemv:warps=8" --extra "template=gemv,M=1:BN=8,BK=2048,warps=8" \
  --extra "template=gemv,M=1:BN=2,BK=4096,warps=8" --extra "template=gemv,M=1:BK=4096,warps=8" \
  --json $OUT/kernels-gemv-w8-session32-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -30
