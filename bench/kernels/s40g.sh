# session 40, call G: the whole suite with the harness's paired timing (both modes), then the head-dim-128 attention
# shapes with the hand-written forms beside the template (attn_prefill_probe.py)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw,temperature.gpu --format=csv,noheader
timeout 420 python3 -m kitsune.bench --workloads all --peers inductor_graph --timeout 200 \
  --modes bulk-sync,dataflow --json "$OUT/$GPU-$(date -u +%F)-session40-suite.json" > /tmp/suite.log 2>&1
grep -v -i "warn\|^  *warnings\|return cls" /tmp/suite.log | grep -E "^(mlp|llama|dlrm|nerf|mgn|incep)|rror|timed out" | cut -c1-250
cp /tmp/suite.log "$OUT/suite-g.log"
(cd /tmp/w/bench/kernels && timeout 110 python3 attn_prefill_probe.py --shapes long2048c,d128_512 \
  --out $OUT/$GPU-$(date -u +%F)-session40-g-attn.json 2>&1 | grep -v -i "warn\|cls.__new" | cut -c1-250)
