# Session 28, device call G: the tensor-core gemv's shared-memory model (ring buffers as Triton allocates them) moves
# b8's heuristic QKV (no tuning database) from a persistent grid of 132 to its 192 work items (2 CTAs / SM, as the
# AOT report says); base tree against new, KITSUNE_TUNING_DB=0, pdl_ab PDL 1 / 2, base / new / base / new.
source bench/kernels/device_env.sh
base_tree
ab() {  # $1 tree dir, $2 tag, $3 round
  KITSUNE_TUNING_DB=0 in_tree $1 $2 timeout 70 python bench/kernels/pdl_ab.py --workloads llama_decode_b8 --modes bulk-sync \
    --settings 1,2 --rounds 2 --out $OUT/ab-$2-$3.json | grep -E "llama|rror" | tail -3
}
for r in 1 2; do echo "== base $r"; ab /tmp/wb base $r; echo "== new $r"; ab /tmp/w new $r; done
