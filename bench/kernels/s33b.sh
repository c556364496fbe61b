# session 33, call B: (1) W packed block by block (mc_gemm.py set pack): each TMA box of W one contiguous run
# instead of PW rows of 128 bytes K * 2 apart; (2) the attention template's config space on five prefill shapes
# outside the suite (bench/models/attention_shapes.py), the heuristic default among them
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 300 python3 bench/kernels/multicast_probe/mc_gemm.py --configs pack --shapes odd,T256_fc1,T256_fc2,T1024_fc1 \
  --graph --reps 2 --out $OUT/mc-gemm-pack-session33.json 2>&1 | grep -v -i warn | cut -c1-150
for n in gpt2_256c short128 long2048c d128_512 long4096; do
  timeout 150 python3 -m kitsune.tools.tune bench/models/attention_shapes.py:$n --max-candidates 40 \
    --db /tmp/db-att-$n.json --json /tmp/tune-att-$n.jsonl > /tmp/tune-att-$n.log 2>&1
  python3 bench/kernels/tune_summary.py /tmp/tune-att-$n.jsonl | grep -v "^bench" | sed "s/^/$n /" | sort -t' ' -k1,1 | head -40
  tail -1 /tmp/tune-att-$n.log
done
cat /tmp/tune-att-*.jsonl > $OUT/tune-attention-shapes-session33.jsonl
