# Session 29, device call F: readers of an in-place KV-cache update read it forwarded (selects over the cache as it
# was), so the attention's cache loads go before its wait and the update leaves the attention's path. Base tree
# (HEAD) against the new one, harness at PDL 1 (the launch setting both trees' programs are measured at; the new
# programs have no launch entry yet), bulk-sync, the in-place workloads; Inductor + CUDA graph in the new run.
source bench/kernels/device_env.sh
base_tree
W=bench/models/llama_inplace.py:b1,bench/models/llama_inplace.py:b8,llama1b_decode_b1
KITSUNE_PDL=1 in_tree /tmp/wb base timeout 280 python -m kitsune.bench --workloads $W --modes bulk-sync --peers '' \
  --json $OUT/fwd-base.json | grep -E "^(llama|bench)|rror" | tail -6
KITSUNE_PDL=1 in_tree /tmp/w new timeout 300 python -m kitsune.bench --workloads $W --modes bulk-sync \
  --peers inductor_graph --json $OUT/fwd-new.json | grep -E "^(llama|bench)|rror" | tail -6
