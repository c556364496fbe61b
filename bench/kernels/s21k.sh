# session 21, thirteenth call: GPT-2 small (12 layers, causal prefill, batch 8 x 256; bench/models/gpt2.py) against
# Inductor + CUDA graph: the attention template's causal form on the GPU
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc13 PYTHONUNBUFFERED=1
timeout 500 python3 -m kitsune.bench --workloads bench/models/gpt2.py --peers inductor_graph --timeout 480 --json $OUT/bench-gpt2.json 2>&1 | grep -E "^(bench|gpt2)|rror|Traceback" | tail -4
python3 - <<'P'
import json, os
for r in json.load(open(os.path.join(os.environ["OUT"], "bench-gpt2.json"))):
    ks = r.get("kernels") or []
    print(r.get("mode"), r.get("kitsune_ms"), r.get("inductor_graph_ms"), r.get("rel_err"), "kernels", len(ks),
          sorted([(round(k["measured_us"], 1), k["kernel"]) for k in ks])[-6:])
P
