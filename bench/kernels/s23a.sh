# session 23, first call: mgn_10k's edge MLP as one hand-written kernel against the two-kernel form
. bench/kernels/device_env.sh
timeout 500 python3 bench/kernels/mgn_fused_probe.py --json $OUT/mgn-fused-probe.json 2>&1 | tail -50
