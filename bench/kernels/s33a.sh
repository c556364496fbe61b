# session 33, call A: (1) fc2's 128 x 192 tile with W multicast over 2 x 1 clusters (mc_gemm.py, set mc192): is
# fc2 (one tile a CTA on 128 SMs, 57 GB/s an SM against fc1's 82) bound by the L2's output? (2) bert_layer's
# attention over its config space on the H100 (session 32 measured it on an H200 only)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 300 python3 bench/kernels/multicast_probe/mc_gemm.py --configs mc192 --shapes odd,T256_fc2,T256_fc1 \
  --graph --reps 2 --out $OUT/mc-gemm-mc192-session33.json 2>&1 | grep -v -i warn | cut -c1-150
timeout 200 python3 -m kitsune.tools.tune bench/models/bert_layer.py --only "BN=32,64,128;stages=1,2" \
  --max-candidates 22 --db /tmp/db-att.json --json /tmp/tune-att.jsonl > /tmp/tune-att.log 2>&1
cp /tmp/tune-att.jsonl $OUT/tune-bert-attention-session33.jsonl
python3 bench/kernels/tune_summary.py /tmp/tune-att.jsonl | grep attention
tail -3 /tmp/tune-att.log
