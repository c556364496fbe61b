# session 39, call H: causal attention's query blocks heaviest first (tiling.TileIndexer: the last queries' block
# reads every key) against row order (.whl/base.tar), three causal prefill shapes, then Llama prefill, bulk-sync
source bench/kernels/device_env.sh
base_tree
for s in llama1024c gpt2_256c long2048c; do
  in_tree /tmp/w new timeout 60 python3 -m kitsune.bench --workloads bench/models/attention_shapes.py:$s \
    --peers inductor_graph --modes bulk-sync --json $OUT/$GPU-2026-11-28-session39-h-$s.json | grep -E "^attention|per kernel" | cut -c1-200
  in_tree /tmp/wb base timeout 60 python3 -m kitsune.bench --workloads bench/models/attention_shapes.py:$s \
    --peers "" --modes bulk-sync --json $OUT/base-$s.json | grep -E "^attention|per kernel" | cut -c1-200
done
