# session 21, eighth and ninth calls: a BERT-base encoder layer (bench/models/bert_layer.py, batch 8 x 512, bf16) with the
# prefill attention template and the merged q/k/v projection, against Inductor + CUDA graph
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc8 PYTHONUNBUFFERED=1
timeout 300 python3 -m kitsune.bench --workloads bench/models/bert_layer.py --peers inductor_graph --timeout 280 --json $OUT/bench-bert.json 2>&1 | grep -E "^bench|rror|Traceback" | tail -4
python3 - <<'P'
import json, os
for r in json.load(open(os.path.join(os.environ["OUT"], "bench-bert.json"))):
    print(r.get("mode"), r.get("kitsune_ms"), r.get("inductor_graph_ms"), r.get("correct"), r.get("rel_err"))
    for k in (r.get("kernels") or [])[:12]:
        print("   ", k)
P
