# session 32, call C: (1) GPU tests of the Gluon gemm (the epoch moved on by the kernel, the split's new protocol)
# and of the chain's Gluon form; (2) the split's work items part-major (new) against tile-major (base, 33e8fed),
# the tuner twice each; (3) harness A/B of the Gluon kernels' in-kernel epoch bump: 11e2293 (host increment
# kernel) against 33e8fed, alternated, on T256 and nerf_65k
source bench/kernels/device_env.sh
base_tree
mkdir -p /tmp/wc && tar -xf $ROOT/.whl/base0.tar -C /tmp/wc
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 240 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py test/unit/test_chain.py -p no:cacheprovider 2>&1 | tail -2
for r in 1 2; do
  for t in new base; do
    d=/tmp/w; [ $t = base ] && d=/tmp/wb
    in_tree $d $t timeout 120 python3 -m kitsune.tools.tune --workload mlp_gpt3_T256 \
      --only "SPLIT=2;GLUON=2;BN=192;stages=5" --max-candidates 4 --db /tmp/db-$t-$r.json \
      --json /tmp/tune-order-$t-$r.jsonl > /tmp/tune-order-$t-$r.log 2>&1
    echo "== order $t $r"; python3 bench/kernels/tune_summary.py /tmp/tune-order-$t-$r.jsonl | grep "linear_0.*S2"
  done
done
cat /tmp/tune-order-*.jsonl > $OUT/tune-order-session32.jsonl
for r in 1 2; do
  for t in base0 bump; do
    d=/tmp/wc; [ $t = bump ] && d=/tmp/wb
    w=mlp_gpt3_T256,nerf_65k; [ $r = 2 ] && w=mlp_gpt3_T256
    in_tree $d $t timeout 200 python3 -m kitsune.bench --workloads $w --peers inductor_graph \
      --json $OUT/bump-$t-$r-session32-h100-2026-11-27.json | grep -E "^(mlp_gpt3|nerf)" | sed "s/^/$t $r: /"
  done
done
