# Session 29, device call H: the in-place Llama layer at batch 8 has no launch entry (PDL 2 by default; call F's PDL 1
# ran it 8 us faster): kitsune-tune --launch on the forwarded program, then the harness of the in-place workloads
# with the packaged database plus that entry (no KITSUNE_PDL), Inductor + CUDA graph beside them.
source bench/kernels/device_env.sh
in_tree /tmp/w new timeout 200 python -m kitsune.tools.tune --launch --modes bulk-sync,dataflow \
  bench/models/llama_inplace.py:b8 --json $OUT/tune-launch-inplace-b8.jsonl | tail -4
cp /tmp/kc-new/tuning.json $OUT/tuning.json
W=bench/models/llama_inplace.py:b1,bench/models/llama_inplace.py:b8,llama1b_decode_b1
in_tree /tmp/w new timeout 330 python -m kitsune.bench --workloads $W --peers inductor_graph \
  --json $OUT/fwd-harness.json | grep -E "^(llama|bench)|rror" | tail -8
