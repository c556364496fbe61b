# session 31, call L: TMA descriptors made on the host, the second column part in a buffer of its own: the gemm
# template's GPU tests (all), the tuner on T256 (Gluon, unsplit, 96 / 128 / 192 columns), then the harness: this
# tree with the winners against 4d1c7a3 (descriptors made in the kernel) with call J's database, twice, ABAB
source bench/kernels/device_env.sh
base_tree
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 150 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py -p no:cacheprovider 2>&1 | tail -3
timeout 200 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --only "GLUON=2;SPLIT=1;BN=96,128,192" \
  --max-candidates 6 --db $OUT/db.json --json $OUT/tune-t256.jsonl > $OUT/tune-t256.log 2>&1
python3 - <<'PY'
import json,os
for l in open(os.environ["OUT"]+"/tune-t256.jsonl"):
    r=json.loads(l); c=r["config"]
    print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)} S{c.get("SPLIT",1)}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:200])
PY
mkdir -p /tmp/kc-new /tmp/kc-old && cp $OUT/db.json /tmp/kc-new/tuning.json && cp $ROOT/.whl/s31j-db.json /tmp/kc-old/tuning.json
for r in 1 2; do
  in_tree /tmp/w new timeout 100 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-new-$r.json | grep -E "^mlp_gpt3"
  in_tree /tmp/wb old timeout 100 python3 -m kitsune.bench --workloads mlp_gpt3_T256 --peers inductor_graph --json $OUT/harness-old-$r.json | grep -E "^mlp_gpt3"
done
