# Session 25, call 5: where llama_decode_b8's M = 8 projections lose to cuBLAS (0.5-0.9x alone): ncu's speed of
# light, occupancy, warp stalls and memory sections on the six kernels of one call (bulk-sync, the second call).
source bench/kernels/device_env.sh
timeout 400 ncu --kernel-name regex:"^k[0-5]$" --launch-skip 6 --launch-count 6 --section SpeedOfLight --section Occupancy --section WarpStateStats --section MemoryWorkloadAnalysis --section LaunchStats python bench/kernels/run_program.py llama_decode_b8 bulk-sync 3 > $OUT/ncu-b8.txt 2>&1
grep -E "^  k[0-9]|Duration|DRAM Throughput|Achieved Occupancy|Registers Per|Warp Cycles Per Issued|L2 Hit|Mem Pipes|Shared Memory Configuration Size|Block Limit" $OUT/ncu-b8.txt | head -90
