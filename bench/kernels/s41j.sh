# session 41, call J: Nsight Compute on the LM head's statistics (k2) and normalisation (k3) kernels -- why 54 us for
# 103 MB (neither more bytes in flight nor fewer operations moved it, call I): speed of light, memory, warp states.
source bench/kernels/device_env.sh
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
timeout 240 $NCU --clock-control none --profile-from-start off -k regex:'^k[23]$' --section SpeedOfLight \
  --section MemoryWorkloadAnalysis --section WarpStateStats --section Occupancy --section LaunchStats \
  --section SchedulerStats python3 -m kitsune.bench --_ncu bench/models/lm_head.py --_ncu-target kitsune:bulk-sync \
  --seed 0 --dtype bfloat16 > $OUT/ncu-lm_head.txt 2>&1
echo "rc=$?"
grep -E "^  k[23]|Duration|DRAM Throughput|Memory Throughput|Achieved Occupancy|Theoretical Occupancy|Registers Per|Stall|Warp Cycles Per Issued|Issued Warp|No Eligible|L1/TEX Hit|L2 Hit|Mem Busy|Max Bandwidth|Block Limit" \
  $OUT/ncu-lm_head.txt | head -70
