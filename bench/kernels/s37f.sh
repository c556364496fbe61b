# session 37, call F: the UNet after its convolutions' inputs were stored channels-last (the GroupNorm's affine +
# SiLU and the nearest upsampling tasks of their own, tiled across the channels), and two models whose code the
# group-by-group reshape index changed (Llama prefill's RoPE, ConvNeXt's residual reads); bulk-sync only
source bench/kernels/device_env.sh
bench_models session37-f bulk-sync unet:110 llama_prefill:80 convnext:90
