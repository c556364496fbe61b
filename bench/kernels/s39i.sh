# session 39, call I: two convolutional models outside the suite on the H200 (code unchanged by this session),
# bulk-sync against Inductor + CUDA graph
source bench/kernels/device_env.sh
bench_models session39-i bulk-sync resnet50:120 unet:120
