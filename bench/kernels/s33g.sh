# session 33, call G: stream-K with the row blocks in lockstep (gluon_gemm_probe.py streamkm) over W packed in
# [BN, BK] blocks, beside the packed and row-major ws baseline (set skmpack), T256's two GEMMs
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 400 python3 bench/kernels/gluon_gemm_probe.py --variants skmpack --shapes T256_fc1,T256_fc2 \
  --out $OUT/gluon-gemm-skmpack-session33.json 2>&1 | grep -v -i warn | cut -c1-160 | tail -20
