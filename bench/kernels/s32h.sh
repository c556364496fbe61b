# session 32, call H: the Gluon gemm over leading dims (batch x tokens) and the Gluon heuristic default:
# (1) GPU tests of the 3-D linear in every form; (2) the tuner on bench/models/bert_layer.py's GEMMs, the Triton and
# Gluon forms of 128 x 128 / 128 x 256 tiles (the default timed first is now the Gluon one); (3) the harness on
# bert_layer and gpt2 with the new defaults (no database entry for their shapes; call G: the Triton defaults);
# (4) GPT-2's compile time (bulk-sync) against Inductor's, cold caches
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py -p no:cacheprovider -k "linear3d" 2>&1 | tail -2
timeout 260 python3 -m kitsune.tools.tune bench/models/bert_layer.py --only "SPLIT=1;BM=128;BN=128,256;stages=3,4,5;warps=8" \
  --max-candidates 12 --db /tmp/db-bert.json --json $OUT/tune-bert-session32.jsonl > $OUT/tune-bert.log 2>&1
tail -5 $OUT/tune-bert.log | cut -c1-220
python3 bench/kernels/tune_summary.py $OUT/tune-bert-session32.jsonl | sort -k1,1 -s | awk '{print}' | head -60
timeout 300 python3 -m kitsune.bench --workloads bench/models/bert_layer.py,bench/models/gpt2.py --peers inductor_graph \
  --json $OUT/h100-2026-11-27-session32-models-gluon.json 2>&1 | grep -E "^(bench|bert|gpt)"
timeout 240 python3 bench/compile_time.py --modes bulk-sync --timeout 230 --json $OUT/compile-time-session32.json 2>&1 | tail -6
