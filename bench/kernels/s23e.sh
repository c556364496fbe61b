# session 23, fifth call: mgn_10k with torch.index_add's own accumulation (bf16 atomic adds, as eager's
# index_add_ and Inductor's fallback to it): tune, breakdown, harness, 100 replays
. bench/kernels/device_env.sh
timeout 200 python3 -m kitsune.tools.tune --workload mgn_10k --json $OUT/tune-mgn-bf16.jsonl 2>&1 | grep -E "best|rror" | tail -6
cp /tmp/kc/tuning.json $OUT/tuning-mgn-bf16.json
python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --peer --json $OUT/pb-bf16.json 2>&1 | grep -v Warn | grep -v "cls.__new__" | head -8
timeout 200 python3 -m kitsune.bench --workloads mgn_10k --peers inductor_graph --json $OUT/bench-mgn.json 2>&1 | grep -E "^(mgn)|rror|Traceback" | tail -4
timeout 120 python3 bench/kernels/replay_check.py mgn_10k --mode dataflow --n 100 --tol 2e-2 2>&1 | tail -3
