# session 41, call G: a two-part Gluon gemm tile (96 = 64 + 32, 192 = 128 + 64 columns) with its A block read into
# registers once a K step for both parts' wgmma (KITSUNE_GEMM_RS, default on) instead of from shared memory by each:
# GPU tests of the two-part configs, then T256's GEMMs tuned in their program over 96 / 192-column tiles with it on
# and off (--only BN=96,192; the incumbents raced too), then the harness on T256 with the winners (RS on).
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 120 python3 -m pytest -q -p no:cacheprovider -m gpu test/unit/test_gemm_gluon.py \
  -k "ws-192 or pipelined-96 or split" > $OUT/gpu-tests.log 2>&1; tail -2 $OUT/gpu-tests.log
summ() { python3 bench/kernels/tune_summary.py "$1"; }
for rs in 0 1; do
  rm -f /tmp/kc/tuning.json
  KITSUNE_GEMM_RS=$rs timeout 150 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --in-program --templates gemm \
    --modes bulk-sync --only "BN=96,192" --max-candidates 5 --json $OUT/tune-T256-rs$rs.jsonl > $OUT/tune-T256-rs$rs.log 2>&1
  echo "== RS=$rs"; summ $OUT/tune-T256-rs$rs.jsonl
done
cp /tmp/kc/tuning.json $OUT/tuning-h200-rs1.json 2>/dev/null
timeout 150 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --modes bulk-sync,dataflow \
  --json $OUT/$GPU-$(date -u +%F)-session41-g-T256.json 2>&1 | grep -E "^mlp_gpt3|timed as"
