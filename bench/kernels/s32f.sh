# session 32, call F: the harness as shipped (packaged database) on the workloads this session's changes reach
# (T256 / T1024: the in-kernel epoch bump; nerf_65k: the chain's host descriptors; b1 / llama1b: unchanged code),
# then llama1b_decode_b1 with call E's in-program row-form winners for b1 (its gemvs have b1's shapes)
source bench/kernels/device_env.sh
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 420 python3 -m kitsune.bench --workloads mlp_gpt3_T256,mlp_gpt3_T1024,nerf_65k,llama_decode_b1,llama1b_decode_b1 \
  --peers inductor_graph --json $OUT/h100-2026-11-27-session32.json 2>&1 | grep -E "^(mlp|nerf|llama)"
mkdir -p /tmp/kc-rows && cp $ROOT/.whl/db-b1-rows.json /tmp/kc-rows/tuning.json
in_tree /tmp/w rows timeout 150 python3 -m kitsune.bench --workloads llama1b_decode_b1 --peers inductor_graph \
  --json $OUT/llama1b-rows-session32.json | grep -E "^llama" | sed "s/^/rows: /"
