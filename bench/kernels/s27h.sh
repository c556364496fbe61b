# Session 27, device call H: a tensor-core gemv stage's row statistics (the RMS norm's sum of squares after its K loop)
# unrolled (tl.static_range), base tree against new, b8 in its launch (pdl_ab.py, graph of 20,
# PDL 1 / 2, processes alternated base / new / base / new); then the harness on b8 with the new tree.
source bench/kernels/device_env.sh
base_tree
ab() {  # $1 tree dir, $2 tag, $3 round
  in_tree $1 $2 timeout 120 python bench/kernels/pdl_ab.py --workloads llama_decode_b8 --modes bulk-sync --settings 1,2 \
    --rounds 3 --out $OUT/ab-$2-$3.json | grep -E "llama|rror" | tail -5
}
for r in 1 2; do echo "== base $r"; ab /tmp/wb base $r; echo "== new $r"; ab /tmp/w new $r; done
(cd /tmp/w && KITSUNE_CACHE_DIR=/tmp/kc-new timeout 200 python -m kitsune.bench --workloads llama_decode_b8 --peers inductor_graph \
  --json $OUT/b8-unrolled-stats.json 2>&1 | grep -v -i warn | grep -E "^llama_decode|per kernel" | tail -8)
