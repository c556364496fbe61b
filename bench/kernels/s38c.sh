# session 38, call C: convolutions over NCHW inputs whose K = (c, kh, kw) is read in runs under 4 bytes (bf16, odd
# windows: a gather of single elements) load that block one K step ahead in registers (DotTemplate.gathers_along):
# the UNet's conv_in and downsamplings, ResNet's stem and first 3 x 3; MLP-Mixer's token-mixing reads (index
# algebra's common factor); bulk-sync only
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for mt in unet:115 resnet18:90 resnet50:120 mixer:90; do
  m=${mt%%:*}; t=${mt##*:}
  timeout $t python3 -m kitsune.bench --workloads bench/models/$m.py --peers inductor_graph --timeout $((t - 5)) \
    --modes bulk-sync --json $OUT/h100-2026-11-28-session38-c-$m.json > /tmp/new-$m.log 2>&1
  grep -E "^$m |rror|timed out" /tmp/new-$m.log | cut -c1-300 | head -4; cp /tmp/new-$m.log $OUT/
done
python3 - <<'PY'
import json, glob, os
want = {"unet": ("k1", "k16", "k30"), "resnet18": ("k0", "k2"), "resnet50": ("k0", "k2")}
for f in sorted(glob.glob(os.environ["OUT"] + "/*.json")):
    for r in json.load(open(f)):
        ks = {k["kernel"]: round(k["measured_us"], 1) for k in r.get("kernels") or []}
        print(r["workload"], r.get("kitsune_ms"), {k: ks.get(k) for k in want.get(r["workload"], ())})
PY
