# session 31, call B: ncu (full set, clocks not locked) of cuBLAS's T256 fc1 kernel and of the 128 x 128 (shipped) and
# 128 x 96 Gluon kernels (bench/kernels/multicast_probe/mc_gemm.py --configs ncu) on the H100
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
P="python3 bench/kernels/multicast_probe/mc_gemm.py --configs ncu --shapes T256_fc1"
timeout 200 ncu --clock-control none --set full -k regex:nvjet --launch-count 1 $P > $OUT/ncu-cublas-t256fc1-session31.txt 2>&1
timeout 300 ncu --clock-control none --set full -k regex:mc_gemm --launch-count 2 $P > $OUT/ncu-gluon-t256fc1-session31.txt 2>&1
for f in $OUT/ncu-*-session31.txt; do
  echo "== $f"; grep -E "^  [a-z_]+.*\(|Duration|SM Frequency|DRAM Throughput|L2 Cache Throughput|L1/TEX Cache Throughput|Compute \(SM\) Throughput|Registers Per|Shared Memory Config|Achieved Occupancy|Executed Ipc A|Issue Slots Busy|One or More Eligible|Mem Pipes Busy|L2 Hit Rate|Memory Throughput  " $f | head -60
done
