# session 37, call E: reshapes indexed group by group (index_algebra.reshape_index): the UNet (its convolutions
# over nearest upsamplings) in bulk-sync, and the suite workloads whose code changed with it (DLRM's bag indices,
# the decode attention's KV-cache concatenation)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 150 python3 -m kitsune.bench --workloads bench/models/unet.py --peers inductor_graph --timeout 145 --modes bulk-sync \
  --json $OUT/h100-2026-11-28-session37-e-unet.json > /tmp/new-unet.log 2>&1
grep -E "^unet |rror" /tmp/new-unet.log | cut -c1-300 | head -5; cp /tmp/new-unet.log $OUT/
timeout 330 python3 -m kitsune.bench --workloads dlrm_b2048,llama_decode_b1,llama1b_decode_b1 --peers inductor_graph \
  --timeout 110 --json $OUT/h100-2026-11-28-session37-e-suite.json > /tmp/suite.log 2>&1
grep -E "^(dlrm|llama)|rror" /tmp/suite.log | cut -c1-300 | head -12; cp /tmp/suite.log $OUT/
