# session 38, call C: convolutions over NCHW inputs whose K = (c, kh, kw) is read in runs under 4 bytes (bf16, odd
# windows: a gather of single elements) load that block one K step ahead in registers (DotTemplate.gathers_along):
# the UNet's conv_in and downsamplings, ResNet's stem and first 3 x 3; MLP-Mixer's token-mixing reads (index
# algebra's common factor); bulk-sync only
source bench/kernels/device_env.sh
bench_models session38-c bulk-sync unet:115 resnet18:90 resnet50:120 mixer:90
python3 bench/kernels/top_kernels.py "$OUT"/*.json --pick unet=k1,k16,k30 --pick resnet18=k0,k2 --pick resnet50=k0,k2
