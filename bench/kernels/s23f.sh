# session 23, sixth call: mgn_10k re-tuned with the chain TMA form's two fixes (wide operands from memory),
# its dataflow placement measured; breakdown and harness
. bench/kernels/device_env.sh
timeout 200 python3 -m kitsune.tools.tune --workload mgn_10k --json $OUT/tune-mgn.jsonl 2>&1 | grep -E "best|rror" | tail -6
timeout 200 python3 -m kitsune.tools.tune --workload mgn_10k --placement --json $OUT/tune-mgn-placement.jsonl 2>&1 | grep -vi "warn\|cls.__new__" | tail -4
cp /tmp/kc/tuning.json $OUT/tuning-mgn.json
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-bulk.json 2>&1 | grep -v Warn | grep -v "cls.__new__" | head -8
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode dataflow --json $OUT/pb-df.json 2>&1 | grep -v Warn | grep -v "cls.__new__" | head -8
timeout 200 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^(mgn)|rror|Traceback" | tail -4
