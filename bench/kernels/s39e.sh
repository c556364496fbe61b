# session 39, call E: intermediates at a 16-byte row pitch (kitsune/codegen/row_pitch.py: the LM head's 50 257-wide
# logits, MLP-Mixer's 196-wide token-mixing result), the long-reduction row-band rule (the LM head's dataflow
# statistics), on the H200: lm_head in both modes; MLP-Mixer bulk-sync against the tree before (.whl/base.tar)
source bench/kernels/device_env.sh
base_tree
bench_models session39-e bulk-sync,dataflow lm_head:100
grep -h "per kernel" /tmp/new-lm_head.log
bench_models session39-e bulk-sync mixer:90
grep -h "per kernel" /tmp/new-mixer.log | cut -c1-400
in_tree /tmp/wb base timeout 60 python3 -m kitsune.bench --workloads bench/models/mixer.py --peers "" --modes bulk-sync \
  --json $OUT/base-mixer.json 2>&1 | grep -E "^mixer |per kernel" | cut -c1-400
