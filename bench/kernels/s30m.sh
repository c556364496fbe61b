# session 30, call M: stream-K with the row blocks of a column of tiles in lockstep (gluon_gemm_probe.py variant
# streamkm, group skm): plain stream-K over 128 x 128 tiles read each W block twice (147 us, section 13's probe).
# (Its first run, records gluon-gemm-streamkm-a-*.json, ran the streamkm configs without their workspace: the
# probe chose the split path by the group name, not the config's variant; mended.)
source bench/kernels/device_env.sh
timeout 420 python3 bench/kernels/gluon_gemm_probe.py --variants skm --shapes T256_fc1,T256_fc2,T1024_fc1 \
  --out $OUT/gluon-gemm-streamkm-b-session30-h100-2026-11-27.json 2>&1 | grep -v -i warn | tail -22
