# session 33, call J: the heuristic default's 192-column tiles (this tree) against HEAD~1 on models outside the suite
# (the suite's generated code is byte-identical: its GEMMs are tuned): bert_layer, gpt2 (ties: unchanged), a
# 512 x 4096 x 4096 linear (its pick turned out to be 128 x 128, not widened: a control)
source bench/kernels/device_env.sh
base_tree
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv,noheader
W=bench/models/bert_layer.py,bench/models/gemm_shapes.py:short512,bench/models/gpt2.py
for t in new base; do
  d=/tmp/w; [ $t = base ] && d=/tmp/wb
  in_tree $d $t timeout 250 python3 -m kitsune.bench --workloads $W --peers inductor_graph \
    --json $OUT/wide-$t-session33.json | grep -E "^(bert|gpt|bench|short)" | sed "s/^/$t: /"
done
