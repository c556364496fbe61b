# session 21, eleventh and twelfth calls: the BERT layer's GEMMs and attention tuned in bf16 (kitsune-tune on a model file now builds it as the
# harness does; the tenth call tuned the fp32 graph), then the harness with those entries
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc11 PYTHONUNBUFFERED=1
mkdir -p /tmp/kc11
timeout 330 python3 -m kitsune.tools.tune bench/models/bert_layer.py --max-candidates 10 --db /tmp/kc11/tuning.json --json $OUT/tune-bert.json 2>&1 | grep -v Warn | grep -v "^\[" | grep -v "^.\[" | tail -8
cp /tmp/kc11/tuning.json $OUT/tune-db.json
timeout 200 python3 -m kitsune.bench --workloads bench/models/bert_layer.py --peers inductor_graph --json $OUT/bench-bert.json 2>&1 | grep -E "^bench|rror|Traceback" | tail -3
python3 - <<'P'
import json, os
for r in json.load(open(os.path.join(os.environ["OUT"], "bench-bert.json"))):
    print(r.get("mode"), r.get("kitsune_ms"), r.get("inductor_graph_ms"), [round(k["measured_us"], 1) for k in (r.get("kernels") or [])])
P
