# session 21, second call: inception_b8 with the sibling 1x1 convolutions merged (kitsune-merge-siblings, sliced
# results) and per-kernel epochs under concurrent branches; harness + timeline; 200 replays bit-identical
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc2 PYTHONUNBUFFERED=1
timeout 200 python3 -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/bench-inception.json 2>&1 | grep -E "^inception|rror|Traceback" | tail -4
timeout 150 python3 bench/kernels/plan_breakdown.py --workloads inception_b8 --mode bulk-sync --json $OUT/pb-bulk.json 2>&1 | grep -v Warn | grep -v "^  "
timeout 150 python3 bench/kernels/plan_breakdown.py --workloads inception_b8 --mode dataflow --json $OUT/pb-df.json 2>&1 | grep -v Warn | grep -v "^  "
for m in bulk-sync dataflow; do timeout 100 python3 bench/kernels/replay_check.py inception_b8 --mode $m --n 200 2>&1 | tail -1; done
