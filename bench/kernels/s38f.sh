# session 38, call F: the conv default's long-K forms (K >= 2048: 4 warps, 128 x 128 blocks 3 stages deep where they
# make a wave, else 4 stages deep; ConvConfig.LONG_K) in the UNet and ResNet-50 (its 1x1 2048 -> 512 has no
# database entry); bulk-sync only
source bench/kernels/device_env.sh
bench_models session38-f bulk-sync unet:115 resnet50:120
python3 bench/kernels/top_kernels.py "$OUT"/*.json --top 16
