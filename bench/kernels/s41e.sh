# session 41, call E: the attention template at head dims of no power of two with its padded lanes masked instead of
# clamped (k was loaded an element at a time: 192 ld.global.b16 in the loop's PTX, AOT), against SDPA, with Gemma's
# 256 and Llama's 64 (unchanged code) beside it; the Gluon gemm's GPU tests over leading dims (the grouped order
# now walks their row blocks as one run) and the ping-pong form.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 150 python3 -m pytest -q -p no:cacheprovider -m gpu test/unit/test_gemm_gluon.py -k "linear3d or many" \
  > $OUT/gpu-tests.log 2>&1; tail -2 $OUT/gpu-tests.log
timeout 200 python3 bench/kernels/attn_prefill_probe.py --forms none --shapes d80_512c,d256_1024c,llama1024c \
  --out $OUT/attn.json 2>&1 | grep -v -i warn | tail -8
