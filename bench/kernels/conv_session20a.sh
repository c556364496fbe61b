# session 20, first call: convolution layouts / loop forms against cuDNN (conv_layout_probe.py), and the harness
# baseline of inception_b8 with its per-kernel times
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/bench/kernels || exit
export KITSUNE_CACHE_DIR=/tmp/kc1 PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv
timeout 200 python3 -m kitsune.bench --workloads inception_b8 --peers inductor_graph --json $OUT/bench-inception.json 2>&1 | grep -vE "^\s*$|Warning|warn" | tail -30
timeout 360 python3 bench/kernels/conv_layout_probe.py --json $OUT/conv-layout-probe.json 2>&1 | grep -v "^#" | tail -80
