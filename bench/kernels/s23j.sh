# session 23, tenth call: which kernels racecheck's hazards on mgn_10k (dataflow) are in
. bench/kernels/device_env.sh
PYTORCH_NO_CUDA_MEMORY_CACHING=1 timeout 300 compute-sanitizer --tool racecheck python3 -m kitsune.bench --sanitize mgn_10k --modes dataflow > $OUT/racecheck-full.txt 2>&1
grep -o "access at [A-Za-z0-9_]*" $OUT/racecheck-full.txt | sort | uniq -c; grep "RACECHECK SUMMARY\|-> ok" $OUT/racecheck-full.txt
