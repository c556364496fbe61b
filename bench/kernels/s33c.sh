# session 33, call C: weights packed in the Gluon gemm's [BN, BK] blocks (PACKS) and the new attention default,
# against HEAD (cb237a5): the packed-weight GPU tests; the harness A/B/A/B on the MLPs, dlrm, bert_layer, gpt2;
# the kernel table's T256 GEMMs against cuBLAS
source bench/kernels/device_env.sh
base_tree
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
timeout 250 python3 -m pytest -q -m gpu test/unit/test_gemm_gluon.py -k "packed_weight_on_gpu or (on_gpu and ws-192 and linear)" \
  -p no:cacheprovider 2>&1 | tail -3
W=mlp_gpt3_T256,mlp_gpt3_T1024,dlrm_b2048
for r in 1 2; do
  for t in base new; do
    d=/tmp/w; [ $t = base ] && d=/tmp/wb
    in_tree $d $t timeout 280 python3 -m kitsune.bench --workloads $W --peers inductor_graph \
      --json $OUT/suite-$t-$r-session33.json | grep -E "^(mlp|dlrm)" | sed "s/^/$t$r: /"
  done
done
for t in base new; do
  d=/tmp/w; [ $t = base ] && d=/tmp/wb
  in_tree $d $t timeout 250 python3 -m kitsune.bench --workloads bench/models/bert_layer.py,bench/models/gpt2.py \
    --peers inductor_graph --json $OUT/models-$t-session33.json | grep -E "^(bert|gpt)" | sed "s/^/$t: /"
done
timeout 200 python3 bench/kernels/run.py --workloads mlp_gpt3_T256 --no-default --json $OUT/kernels-t256-pack-session33.json \
  2>&1 | grep -v -i warn | tail -6
