# session 38, call A: the UNet after the long-row GroupNorm split (kitsune-split-long-norms) and the channels-last
# writers' [pixels, channels] blocks; ConvNeXt (unmeasured since session 37's reshape_index); bulk-sync only
source bench/kernels/device_env.sh
bench_models session38-a bulk-sync unet:115 convnext:230
python3 bench/kernels/top_kernels.py "$OUT"/*unet.json --top 14
