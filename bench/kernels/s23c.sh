# session 23, third call: mgn_10k with memory-bound two-layer chains (the edge MLP with its gathers and scatter,
# the node MLP), the register form one program per tile: breakdown, then the harness in both modes
. bench/kernels/device_env.sh
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-chain.json 2>&1 | grep -v Warn | grep -v "cls.__new__" | head -10
timeout 400 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^(mgn)|rror|Traceback" | tail -8
