# session 22, eighth call: the suite's compute / irregular workloads in both modes next to Inductor + CUDA graph
# (kitsune-project-gathers, row norms on the gemm template, tickets only where a program waits)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit
mkdir -p /tmp/w && tar -xf .whl/tree.tar -C /tmp/w && cd /tmp/w || exit
export PYTHONPATH=/tmp/site:/tmp/w:/tmp/w/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc8 PYTHONUNBUFFERED=1
timeout 560 python3 -m kitsune.bench --workloads mlp_gpt3_T1024,mlp_gpt3_T256,nerf_65k,dlrm_b2048,mgn_10k,inception_b8 --peers inductor_graph --json $OUT/bench-a.json 2>&1 | grep -E "^(mlp|nerf|dlrm|mgn|inception)|rror|Traceback" | tail -14
