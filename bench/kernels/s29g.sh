# Session 29, device call G: call F's new run again (call F's tree.tar held HEAD plus the script only, so its two
# runs were both the base: an A/A at 0.1-0.4%). The forwarded reads, harness at PDL 1, bulk-sync, with Inductor.
source bench/kernels/device_env.sh
W=bench/models/llama_inplace.py:b1,bench/models/llama_inplace.py:b8,llama1b_decode_b1
KITSUNE_PDL=1 in_tree /tmp/w new timeout 300 python -m kitsune.bench --workloads $W --modes bulk-sync \
  --peers inductor_graph --json $OUT/fwd-new.json | grep -E "^(llama|bench)|rror" | tail -6
