# session 38, call F: the conv default's long-K forms (K >= 2048: 4 warps, 128 x 128 blocks 3 stages deep where they
# make a wave, else 4 stages deep; ConvConfig.LONG_K) in the UNet and ResNet-50 (its 1x1 2048 -> 512 has no
# database entry); bulk-sync only
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for mt in unet:115 resnet50:120; do
  m=${mt%%:*}; t=${mt##*:}
  timeout $t python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout $((t - 5)) \
    --modes bulk-sync --json $OUT/h100-2026-11-28-session38-f-$m.json > /tmp/new-$m.log 2>&1
  grep -E "^$m |rror|timed out" /tmp/new-$m.log | cut -c1-300 | head -4; cp /tmp/new-$m.log $OUT/
done
python3 - <<'PY'
import json, glob, os
for f in sorted(glob.glob(os.environ["OUT"] + "/*.json")):
    for r in json.load(open(f)):
        ks = sorted(r.get("kernels") or [], key=lambda k: -k["measured_us"])
        print(r["workload"], r.get("kitsune_ms"), [(k["kernel"], round(k["measured_us"], 1)) for k in ks[:16]])
PY
