# Session 29, device call E: the harness on the suite's other workloads with Inductor + CUDA graph in the same
# process, for the closing table (the decode layers ran in call A).
source bench/kernels/device_env.sh
timeout 560 python -m kitsune.bench --workloads ${WL:-mlp_gpt3_T1024,mlp_gpt3_T256,nerf_65k,dlrm_b2048,mgn_10k} \
  --peers inductor_graph --json $OUT/harness.json 2>&1 | grep -v -i warn | grep -E "^[a-z_0-9:]+ +(dataflow|bulk)|rror" | tail -24
