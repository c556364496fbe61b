# session 23, thirteenth call: the chain's [n, k] weight blocks read along k and transposed in registers (A/B in one
# call: KITSUNE_CHAIN_WT=0 is the strided read; the switch existed only for this call, the change was not kept)
. bench/kernels/device_env.sh
for wt in 0 1 0 1; do
KITSUNE_CHAIN_WT=$wt python3 bench/kernels/plan_breakdown.py --workloads mgn_10k --mode bulk-sync --json $OUT/pb-wt$wt.json 2>&1 | grep -E "replay|k1|k2" | head -3 | sed "s/^/wt=$wt /"
done
