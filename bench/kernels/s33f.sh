# session 33, call F: (1) the merged 1x1 convolution (176 channels) with every output channel in one 256-lane block
# (ConvConfig.space gains BF 256: the input read once, one wave of work items); (2) T256's fc1 split in two parts of
# 128 x 192 now that W is packed (section 35's 78 us was row-major)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 240 python3 -m kitsune.tools.tune --workload inception_b8 --only "BF=256" --max-candidates 16 \
  --db /tmp/db-conv.json --json /tmp/tune-conv.jsonl > /tmp/tune-conv.log 2>&1
python3 bench/kernels/tune_summary.py /tmp/tune-conv.jsonl | cut -c1-150
grep best /tmp/tune-conv.log | cut -c1-200
timeout 200 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 --only "BN=192;SPLIT=2" --max-candidates 8 \
  --db /tmp/db-split.json --json /tmp/tune-split.jsonl > /tmp/tune-split.log 2>&1
python3 bench/kernels/tune_summary.py /tmp/tune-split.jsonl | cut -c1-150
cat /tmp/tune-conv.jsonl /tmp/tune-split.jsonl > $OUT/tune-conv256-split-session33.jsonl
