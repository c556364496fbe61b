# session 31, call H: ncu of the compiler's fc2 kernel (128 x 192, the harness's k1, call F's user database) and of
# the probe's same tile, side by side (clocks not locked)
source bench/kernels/device_env.sh
mkdir -p /tmp/kc-new && cp $ROOT/.whl/s31f-db.json /tmp/kc-new/tuning.json
M="gpu__time_duration.sum,sm__cycles_active.avg,sm__cycles_elapsed.avg.per_second,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_sectors_srcunit_tex_op_read.sum,launch__grid_size,launch__shared_mem_per_block_dynamic,launch__registers_per_thread"
(cd /tmp/w && PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc-new timeout 250 ncu --clock-control none -k regex:"^k1$" --launch-count 1 --metrics $M --section WarpStateStats \
  python3 -m kitsune.bench --workloads mlp_gpt3_T256 --modes bulk-sync --peers '' --no-isolate > $OUT/ncu-fc2-kitsune.txt 2>&1)
timeout 200 ncu --clock-control none -k regex:mc_gemm_ws --launch-count 1 --metrics $M --section WarpStateStats \
  python3 bench/kernels/multicast_probe/mc_gemm.py --configs fc2 --shapes T256_fc2 > $OUT/ncu-fc2-probe.txt 2>&1
for f in $OUT/ncu-fc2-*.txt; do echo "== $f"; grep -E "^  [a-z_0-9]+.*\(|gpu__time|sm__cycles|dram__|lts__|launch__|smsp__pcsamp|gmma|Warp Cycles Per Issued|stalled" $f | head -24; done
