# session 23, seventh call: the node accumulator's zero start set by the kernel before its scatter; issue 16's
# three workloads in one run with ncu, mgn's breakdown, replays and memcheck
. bench/kernels/device_env.sh
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode dataflow --json $OUT/pb-df.json 2>&1 | grep -v Warn | grep -v "cls.__new__" | head -7
timeout 420 python3 -m kitsune.bench --workloads dlrm_b2048,mgn_10k,inception_b8 --peers inductor_graph --ncu --json $OUT/bench-irregular.json 2>&1 | grep -E "^(mgn|dlrm|incep)|rror|Traceback" | tail -8
timeout 100 python3 bench/kernels/replay_check.py mgn_10k --mode dataflow --n 100 --tol 2e-2 2>&1 | tail -1
