# session 23, eleventh call: dataflow against bulk-sync timed alternately (issue 16's three workloads)
. bench/kernels/device_env.sh
timeout 400 python3 bench/kernels/mode_ab.py --json $OUT/mode-ab.json 2>&1 | grep -v "Warn\|cls.__new__\|_warn_once" | tail -5
