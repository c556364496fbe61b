# Session 25, call 13: ResNet-18's layer-1 3x3 convolution, in its program alone and isolated (conv_iso_probe.py).
source bench/kernels/device_env.sh
timeout 240 python bench/kernels/conv_iso_probe.py 2>&1 | grep -v -i "warn\|cls.__new" | tail -3
