# session 31, call F: the gemm template's 96- and 192-column Gluon tiles: GPU tests against the reference, the
# tuner on the GPT-3 MLPs over them (the incumbents in the race), then the harness with the winners (user
# database) and with the packaged database alone
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py -p no:cacheprovider -k "192 or 96" 2>&1 | tail -3
for w in mlp_gpt3_T256 mlp_gpt3_T1024; do
  timeout 170 python3 -m kitsune.tools.tune --workload $w --only "BN=96,192" \
    --max-candidates 8 --db $OUT/db.json --json $OUT/tune-$w.jsonl > $OUT/tune-$w.log 2>&1
  tail -2 $OUT/tune-$w.log
done
python3 - <<'PY'
import json,os,glob
for f in sorted(glob.glob(os.environ["OUT"]+"/tune-*.jsonl")):
    for l in open(f):
        r=json.loads(l); c=r["config"]
        print(r["task"], r["problem"].split(",")[1:4], f'{c["BM"]}x{c["BN"]} w{c["warps"]} s{c["stages"]} G{c.get("GLUON",0)}', r.get("ms") and round(r["ms"]*1e3,1), r.get("error","")[:200])
PY
mkdir -p /tmp/kc-new && cp $OUT/db.json /tmp/kc-new/tuning.json
in_tree /tmp/w new timeout 150 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph --json $OUT/harness-new.json | grep -E "^mlp_gpt3"
in_tree /tmp/w base timeout 150 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024 --peers inductor_graph --json $OUT/harness-base.json | grep -E "^mlp_gpt3"
