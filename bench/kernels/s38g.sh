# session 38, call G: the UNet in the dataflow mode at the session's final code (call F measured bulk-sync)
source bench/kernels/device_env.sh
bench_models session38-g dataflow unet:150
