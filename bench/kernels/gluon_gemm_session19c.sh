# session 19, third call: the gemm forms on shapes outside the suite (bench/models/gemm_shapes.py), tuned alone
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/bench/kernels || exit
export KITSUNE_CACHE_DIR=/tmp/kc5
for f in sq4096 wide_gelu short512 tall_narrow; do
  timeout 130 python3 -m kitsune.tools.tune bench/models/gemm_shapes.py:$f --only GLUON=1,2 --max-candidates 8 --db $OUT/db.json --json $OUT/tune-$f.jsonl 2>&1 | grep -E "best|Error|error" | tail -3
done
python3 - <<'PY'
import json, glob, os
for f in sorted(glob.glob(os.environ["OUT"] + "/tune-*.jsonl")):
    for l in open(f):
        r = json.loads(l); c = r["config"]
        print(os.path.basename(f)[5:-6], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} P{int(c.get("PER_ITEM",0))} S{c.get("SPLIT",1)}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:100])
PY
