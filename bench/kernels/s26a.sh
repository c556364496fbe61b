# Session 26, device call A: (1) the Gluon GEMM probe at T256 with a K split in two (96 programs, one unit each)
# beside the unsplit body, stream-K and cuBLAS; (2) ncu on the split and stream-K kernels (why stream-K at
# 132 programs ran 110 us in section 13); (3) heuristic defaults (KITSUNE_TUNING_DB=0) against the tuned
# database on four workloads, both modes, alternating in one call.
ROOT=$PWD
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 240 python bench/kernels/gluon_gemm_probe.py --variants ws,splitk2,streamk --shapes T256_fc1,T256_fc2 \
  --out $OUT/gluon-gemm-splitk2.json 2>&1 | grep -v -i warn | tail -40
for v in splitk2 streamk; do
  timeout 150 ncu --kernel-name regex:gemm_sk --launch-count 1 --section SpeedOfLight --section MemoryWorkloadAnalysis \
    --metrics dram__bytes_read.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_sector_hit_rate.pct,sm__cycles_active.avg,sm__throughput.avg.pct_of_peak_sustained_elapsed \
    python bench/kernels/gluon_gemm_probe.py --variants $v --shapes T256_fc1 > $OUT/ncu-$v.txt 2>&1
  grep -E "Duration|DRAM Throughput|L2 Cache Throughput|dram__bytes|lts__t_sector|sm__|Memory Throughput|Compute \(SM\)" $OUT/ncu-$v.txt | head -20
done
for W in mlp_gpt3_T256,mlp_gpt3_T1024; do
  for DB in 0 1; do
    echo "== $W DB=$DB"
    KITSUNE_TUNING_DB=$DB KITSUNE_CACHE_DIR=/tmp/kc-db$DB timeout 200 python -m kitsune.bench --workloads $W --peers '' \
      --json $OUT/db$DB-$(echo $W | tr , _).json 2>&1 | grep -v -i warn | tail -14
  done
done
