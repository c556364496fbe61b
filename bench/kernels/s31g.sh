# session 31, call G: why the compiler's 128 x 192 fc2 (tuner: 74.8 us) is slower than the probe's (68.4 us, call E):
# the kernel table with call F's winners (user database) and the probe on the same shapes, one call
source bench/kernels/device_env.sh
cp $ROOT/bench/kernels/s31f-db.json /tmp/kc-new/tuning.json 2>/dev/null || { mkdir -p /tmp/kc-new && cp $ROOT/.whl/s31f-db.json /tmp/kc-new/tuning.json; }
in_tree /tmp/w new timeout 200 python3 bench/kernels/run.py --workloads mlp_gpt3_T256 --no-default --json $OUT/kernels-t256-new.json | tail -8
timeout 200 python3 bench/kernels/multicast_probe/mc_gemm.py --configs fc2 --graph --shapes T256_fc2,T256_fc1 --out $OUT/mc-gemm-g-session31-h100-2026-11-27.json 2>&1 | grep -v -i warn | grep -v skipped | tail -12
