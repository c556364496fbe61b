# session 23, twelfth call: the register form's operand from memory loaded once a layer (pieces of up to 128
# columns whatever SEG, kept across segments); mgn re-tuned, breakdown, harness
. bench/kernels/device_env.sh
timeout 200 python3 -m kitsune.tools.tune --workload mgn_10k --json $OUT/tune-mgn.jsonl 2>&1 | grep -E "best|rror" | tail -6
cp /tmp/kc/tuning.json $OUT/tuning-mgn.json
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb.json 2>&1 | grep -v Warn | grep -v "cls.__new__" | head -6
timeout 200 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^(mgn)|rror|Traceback" | tail -4
