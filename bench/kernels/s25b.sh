# Session 25, call 2: the harness's fixed cost (one replay of a graph of tiny kernels), llama_decode_b8's launch
# setting re-tuned with the peeled loops and the split-K kernels of the early form, the harness on both decode
# layers, and the decode attention's parts measured in the launch.
source bench/kernels/device_env.sh
timeout 60 python bench/kernels/overhead_probe.py --kernels 1,6,13 2>&1 | grep -v -i warn
timeout 300 python -m kitsune.tools.tune --launch --workload llama_decode_b8 --json $OUT/tune-launch-b8.jsonl 2>&1 | grep -v -i warn | tail -4
cp /tmp/kc/tuning.json $OUT/tuning.json
timeout 300 python -m kitsune.bench --workloads llama_decode_b1,llama_decode_b8 --peers inductor_graph --json $OUT/decode.json 2>&1 | grep -v -i warn | tail -12
timeout 200 python bench/kernels/attn_parts_ab.py --workloads llama_decode_b1 --parts 0,5,41 --rounds 3 --out $OUT/attn-parts-b1.json 2>&1 | grep -v -i "warn\|cls.__new"
timeout 200 python bench/kernels/attn_parts_ab.py --workloads llama_decode_b8 --parts 0,25,1 --rounds 3 --out $OUT/attn-parts-b8.json 2>&1 | grep -v -i "warn\|cls.__new"
