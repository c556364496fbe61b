# Session 28, device call A: (1) sibling K loops of a tensor-core gemv fused (b8's gate / up: one loop, both weight
# chunks in flight), base tree against new, b8 in its launch (pdl_ab.py, graph of 20, PDL 1 / 2, base / new / base /
# new); (2) inception's convolutions re-tuned with K chunks of 128 (kitsune-tune --only BK=128) and the kernel
# table on inception; (3) the read floor: how fast one kernel reads 8-263 MB from DRAM at all (read_floor.py).
source bench/kernels/device_env.sh
base_tree
ab() {  # $1 tree dir, $2 tag, $3 round
  in_tree $1 $2 timeout 100 python bench/kernels/pdl_ab.py --workloads llama_decode_b8 --modes bulk-sync --settings 1,2 \
    --rounds 2 --out $OUT/ab-$2-$3.json | grep -E "llama|rror" | tail -5
}
for r in 1 2; do echo "== base $r"; ab /tmp/wb base $r; echo "== new $r"; ab /tmp/w new $r; done
echo "== tune inception BK=128"
timeout 200 python -m kitsune.tools.tune --workload inception_b8 --only BK=128 --max-candidates 30 \
  --json $OUT/tune-inception-bk128.jsonl 2>&1 | grep -v -i warn | tail -8
timeout 100 python bench/kernels/run.py --workloads inception_b8 --json $OUT/kernels-inception.json 2>/dev/null | tail -8
cp /tmp/kc/*.json $OUT/ 2>/dev/null
echo "== read floor"
timeout 150 python bench/kernels/read_floor.py --json $OUT/read-floor.json 2>&1 | grep -v -i warn | tail -8
