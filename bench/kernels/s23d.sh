# session 23, fourth call: mgn_10k's chains tuned (ChainConfig.space), the residual read from the chain's own
# input tile; breakdown and the harness in both modes
. bench/kernels/device_env.sh
timeout 300 python3 -m kitsune.tools.tune --workload mgn_10k --json $OUT/tune-mgn-chains.jsonl 2>&1 | grep -E "best|rror" | tail -8
cp /tmp/kc/tuning.json $OUT/tuning-mgn-chains.json
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-chain-tuned.json 2>&1 | grep -v Warn | grep -v "cls.__new__" | head -10
timeout 300 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^(mgn)|rror|Traceback" | tail -8
