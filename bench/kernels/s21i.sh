# session 21, tenth call: the BERT layer with its LayerNorm rows masked instead of clamped (16-byte accesses) and
# its GEMMs tuned (kitsune-tune on the model file), against Inductor + CUDA graph
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc10 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc10
timeout 150 python3 -m kitsune.bench --workloads bench/models/bert_layer.py --peers inductor_graph --modes bulk-sync --json $OUT/bench-bert-untuned.json 2>&1 | grep -E "^bench|rror|Traceback" | tail -2
timeout 300 python3 -m kitsune.tools.tune bench/models/bert_layer.py --max-candidates 10 --db /tmp/kc10/tuning.json --json $OUT/tune-bert.json 2>&1 | grep -v Warn | grep -v "^\[" | tail -8
cp /tmp/kc10/tuning.json $OUT/tune-db.json
timeout 200 python3 -m kitsune.bench --workloads bench/models/bert_layer.py --peers inductor_graph --json $OUT/bench-bert.json 2>&1 | grep -E "^bench|rror|Traceback" | tail -3
python3 - <<'P'
import json, os
for r in json.load(open(os.path.join(os.environ["OUT"], "bench-bert.json"))):
    print(r.get("mode"), r.get("kitsune_ms"), r.get("inductor_graph_ms"), [round(k["measured_us"], 1) for k in (r.get("kernels") or [])])
P
