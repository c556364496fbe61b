# session 38, call B: the UNet and ConvNeXt after their strided downsampling convolutions load the input [K, pixels]
# (DotTemplate.lane_run); bulk-sync only
source bench/kernels/device_env.sh
bench_models session38-b bulk-sync unet:115 convnext:230
python3 bench/kernels/top_kernels.py "$OUT"/*unet.json --top 14
python3 bench/kernels/top_kernels.py "$OUT"/*convnext.json --pick convnext=k17,k33,k79
