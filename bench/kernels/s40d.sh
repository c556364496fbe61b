# session 40, call D: prefill attention -- the template's kernel against hand-written forms (causal split, exp2,
# K rows transposed) and SDPA on four attention_shapes.py shapes (attn_prefill_probe.py)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
cd /tmp/w/bench/kernels && timeout 520 python3 attn_prefill_probe.py --shapes ${SHAPES:-llama1024c,gpt2_256c,bert512,long2048c} \
  --out $OUT/$GPU-$(date -u +%F)-session40-d-attn.json 2>&1 | grep -v -i warn | cut -c1-250
