# Session 26, device call B: the K split in two at T256 (the probe's splitk2 group; call A's lookup missed it),
# ncu on it and on the unsplit 128 x 128 body (L2 throughput at 96 programs against stream-K's 3.65 TB/s).
ROOT=$PWD
source bench/kernels/device_env.sh
timeout 200 python bench/kernels/gluon_gemm_probe.py --variants ws,splitk2 --shapes T256_fc1,T256_fc2 \
  --out $OUT/gluon-gemm-splitk2.json 2>&1 | grep -v -i warn | tail -24
for v in splitk2 ws; do
  timeout 150 ncu --kernel-name regex:gemm_ --launch-count 1 --section SpeedOfLight \
    --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct \
    python bench/kernels/gluon_gemm_probe.py --variants $v --shapes T256_fc1 > $OUT/ncu-$v.txt 2>&1
  grep -E "gemm_|Duration|DRAM Throughput|L2 Cache Throughput|dram__bytes|lts__t_sector|Compute \(SM\)" $OUT/ncu-$v.txt | head -12
done
