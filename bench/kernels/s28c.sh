# Session 28, device call C: (1) llama_decode_b1 in its launch with each of its gemvs (O, gate / up, down) given one
# narrow config of the tuning space through the user's database (one process each: the in-program tuner of call B
# ended on an illegal memory access after the QKV task), checked against eager and timed (pdl_ab.py, PDL 1);
# (2) the harness on b8 with the base tree (df3bca9) and this one (gate / up loops fused), alternated.
source bench/kernels/device_env.sh
base_tree
K="h100|gemv|template=gemv,M=1,N=%s,K=%s,batch=1,elem_bytes=2,out_elems=0,row=0,rows=0,split_ok=%s"
variant() {  # $1 tag, $2 N, $3 K, $4 split_ok, $5 BN, $6 BK, $7 warps
  mkdir -p /tmp/kc-$1
  python -c "import json,sys; k=sys.argv[1] % tuple(sys.argv[2:5]); json.dump({k: {'config': {'BN': int(sys.argv[5]), 'BK': int(sys.argv[6]), 'SPLIT': 1, 'DOT': False, 'PER_ITEM': True, 'stages': 3, 'warps': int(sys.argv[7])}, 'ms': 0.01}}, open('/tmp/kc-$1/tuning.json', 'w'))" "$K" $2 $3 $4 $5 $6 $7
  echo "== $1: N=$2 K=$3 BN=$5 BK=$6 w$7"
  KITSUNE_CACHE_DIR=/tmp/kc-$1 timeout 60 python bench/kernels/pdl_ab.py --workloads llama_decode_b1 --settings 1 --rounds 3 \
    --out $OUT/narrow-$1.json 2>&1 | grep -v -i warn | grep -E "llama|rror|illegal" | tail -3
}
mkdir -p /tmp/kc-base; echo "== base"; KITSUNE_CACHE_DIR=/tmp/kc-base timeout 60 python bench/kernels/pdl_ab.py --workloads llama_decode_b1 --settings 1 --rounds 3 --out $OUT/narrow-base.json 2>&1 | grep -E "llama|rror" | tail -2
variant o1 2048 2048 True 1 2048 4
variant o2 2048 2048 True 2 2048 8
variant gu1 16384 2048 False 1 2048 4
variant gu2 16384 2048 False 2 2048 8
variant d1 2048 8192 True 1 8192 4
variant d2 2048 8192 True 2 8192 8
variant d2b 2048 8192 True 2 4096 4
echo "== base again"; KITSUNE_CACHE_DIR=/tmp/kc-base timeout 60 python bench/kernels/pdl_ab.py --workloads llama_decode_b1 --settings 1 --rounds 3 --out $OUT/narrow-base2.json 2>&1 | grep -E "llama|rror" | tail -2
hb() {  # $1 tree, $2 tag, $3 round
  in_tree $1 h$2 timeout 100 python -m kitsune.bench --workloads llama_decode_b8 --modes bulk-sync \
    --peers inductor_graph --json $OUT/b8-$2-$3.json | grep -E "^llama_decode_b8 " | tail -2
}
for r in 1 2; do echo "== harness base $r"; hb /tmp/wb base $r; echo "== harness new $r"; hb /tmp/w new $r; done
