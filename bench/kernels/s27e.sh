# Session 27, device call E: the decode attention template with its blocks before a chunk's last in a loop that reads the
# cache alone (the concat select folded), base tree against new, b1 and b8 in their launch (pdl_ab.py, graph of 20,
# PDL 1 / 2, processes alternated base / new / base / new); then the harness on both with the new tree, Inductor beside.
ROOT=$PWD
source bench/kernels/device_env.sh
mkdir -p /tmp/wb && tar -xf $ROOT/.whl/base.tar -C /tmp/wb
ab() {  # $1 tree dir, $2 tag
  (cd $1 && PYTHONPATH=/tmp/site:$1:$1/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc-$2 timeout 120 python bench/kernels/pdl_ab.py \
    --workloads llama_decode_b1,llama_decode_b8 --modes bulk-sync --settings 1,2 --rounds 3 --out $OUT/ab-$2-$3.json 2>&1 \
    | grep -v -i warn | grep -E "llama|rror" | tail -5)
}
for r in 1 2; do echo "== base $r"; ab /tmp/wb base $r; echo "== new $r"; ab /tmp/w new $r; done
(cd /tmp/w && KITSUNE_CACHE_DIR=/tmp/kc-new timeout 200 python -m kitsune.bench --workloads llama_decode_b1,llama_decode_b8 --peers inductor_graph \
  --json $OUT/decode-attn-loop.json 2>&1 | grep -v -i warn | grep -E "^llama_decode|per kernel" | tail -8)
