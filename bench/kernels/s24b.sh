# Session 24, call B: kitsune-tune --launch (PDL 0 / 1 / 2 per program and mode, measured) on the suite.
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 560 python -m kitsune.tools.tune --launch --workload llama_decode_b1 --workload llama_decode_b8 --workload llama1b_decode_b1 --workload dlrm_b2048 --workload mgn_10k --workload inception_b8 --workload mlp_gpt3_T256 --workload mlp_gpt3_T1024 --workload nerf_65k --json $OUT/tune-launch-session24.jsonl 2>&1 | grep -v -i warn
cp /tmp/kc/tuning.json $OUT/tuning.json
