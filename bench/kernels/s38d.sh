# session 38, call D: the UNet's innermost-level 3 x 3 convolution (512 -> 512 over 8 x 16 x 16, 128 work items of the
# default's tile) and its 32 x 32 counterpart tuned alone over the whole conv space, input channels-last as in the
# UNet: does a grid of more, smaller work items beat the default's one wave? (TUNE_TAG names the logs: s38e.sh)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
for m in unet_mid unet_up; do
  timeout 250 python3 -m kitsune.tools.tune bench/models/conv_shapes.py:$m --max-candidates 60 --db /tmp/tune-$m.json \
    --json $OUT/tune-$m-${TUNE_TAG:-session38}-h100-$(date -u +%F).json > $OUT/tune-$m.log 2>&1
  tail -3 $OUT/tune-$m.log | cut -c1-300
done
python3 - <<'PY'
import json, glob, os
for f in sorted(glob.glob(os.environ["OUT"] + "/tune-*.json")):
    rows = [json.loads(l) for l in open(f) if l.strip()]
    ok = sorted([r for r in rows if "ms" in r], key=lambda r: r["ms"])
    print(f.split("/")[-1], len(rows), "ok", len(ok))
    for r in ok[:8]:
        print("  %.2f us" % (r["ms"] * 1e3), r["config"])
    for r in ok:
        c = r["config"]
        if (c["BF"], c["BM"], c["BK"], c["warps"], c["stages"]) == (128, 64, 64, 8, 3):
            print("  default-like %.2f us" % (r["ms"] * 1e3), c)
PY
