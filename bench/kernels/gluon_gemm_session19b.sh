# session 19, second call: the Gluon gemm's GPU tests, the GPT-3 MLPs with the packaged database, the power probe
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:$PWD:$PWD/bench/kernels:$PWD/test/unit || exit
export KITSUNE_CACHE_DIR=/tmp/kc3
timeout 200 python3 -m pytest -q -m gpu -p no:cacheprovider test/unit/test_gemm_gluon.py test/unit/test_chain.py 2>&1 | tail -5
timeout 200 python3 -m kitsune.bench --workloads mlp_gpt3_T1024,mlp_gpt3_T256 --peers inductor_graph --json $OUT/bench.json 2>&1 | grep -E "^mlp_gpt3|per kernel"
timeout 150 python3 bench/kernels/power_probe.py --workload mlp_gpt3_T1024 --json $OUT/power.json 2>&1 | grep -v Warning | tail -6
