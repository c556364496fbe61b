# session 34, call B: the Gluon 1x1 convolution with coalesced stores (STORE 1) and 32-pixel tiles, beside the
# kernel table's rows for inception_b8 (the incumbent Triton convolutions and cuDNN in one run)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 200 python3 bench/kernels/conv1x1_gluon_probe.py --json $OUT/conv1x1-gluon-b-session34.json 2>&1 | grep -v -i warn | cut -c1-150
timeout 300 python3 bench/kernels/run.py --workloads inception_b8 --no-default --json $OUT/kernels-inception-session34.json 2>&1 | grep -v -i warn | tail -25 | cut -c1-200
