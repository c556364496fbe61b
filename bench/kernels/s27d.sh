# Session 27, device call D: a row statistic's loop fused into the K loop before it (fuse_loops: b8's QKV and gate / up
# norms), the tree before (base, .whl/base.tar) against after, b8 in its launch (pdl_ab.py: graph of 20 launches,
# PDL 1 / 2, processes alternated base / new / base / new); then the harness on b8 with the new tree, Inductor beside.
source bench/kernels/device_env.sh
base_tree
ab() {  # $1 tree dir, $2 tag, $3 round
  in_tree $1 $2 timeout 120 python bench/kernels/pdl_ab.py --workloads llama_decode_b8 --modes bulk-sync --settings 1,2 \
    --rounds 3 --out $OUT/ab-$2-$3.json | grep -E "llama|rror" | tail -3
}
for r in 1 2; do echo "== base $r"; ab /tmp/wb base $r; echo "== new $r"; ab /tmp/w new $r; done
(cd /tmp/w && KITSUNE_CACHE_DIR=/tmp/kc-new timeout 120 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph \
  --json $OUT/b8-fused.json 2>&1 | grep -v -i warn | grep -E "^llama_decode_b8 |per kernel" | tail -4)
