# Session 26, device call G: llama_decode_b8 with the gate / up projection's two K loops fused (fuse_loops) against
# the tree before it (base, .whl/base.tar), base / new / base, Inductor + CUDA graph beside each (outputs checked against eager).
ROOT=$PWD
source bench/kernels/device_env.sh
mkdir -p /tmp/wb && tar -xf $ROOT/.whl/base.tar -C /tmp/wb
run() {  # $1 tree dir, $2 tag
  (cd $1 && PYTHONPATH=/tmp/site:$1:$1/bench/kernels KITSUNE_CACHE_DIR=/tmp/kc-$2 timeout 100 python -m kitsune.bench \
    --workloads llama_decode_b8 --peers inductor_graph --json $OUT/b8-$2.json 2>&1 | grep -v -i warn \
    | grep -E "^llama_decode_b8 |per kernel" | tail -4)
}
echo "== base"; run /tmp/wb base
echo "== fused"; run /tmp/w fused
echo "== base again"; run /tmp/wb base2
