# session 33, call H: BERT's short-K GEMMs: the warp-specialised form (one consumer: the epilogue stalls the tensor
# cores) against ping-pong consumers (gluon_gemm_probe.py set shortk)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 400 python3 bench/kernels/gluon_gemm_probe.py --variants shortk --shapes bert_qkv,bert_o,bert_fc1,bert_fc2 \
  --out $OUT/gluon-gemm-shortk-session33.json 2>&1 | grep -v -i warn | cut -c1-160 | tail -36
