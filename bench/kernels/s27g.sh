# Session 27, device call G: (1) ncu's per-instruction stall samples (source page, SASS) of llama_decode_b8's QKV (k0)
# and gate / up (k4) kernels, bulk-sync, one launch each; (2) the harness on llama1b_decode_b1 with this session's
# tree (its decode attention now straight-line code per layer), Inductor + CUDA graph beside it.
source bench/kernels/device_env.sh
timeout 150 ncu --kernel-name regex:"^k(0|4)$" --launch-skip 2 --launch-count 2 --section SourceCounters \
  --section WarpStateStats --page source --csv --print-source sass python bench/kernels/run_program.py llama_decode_b8 bulk-sync 3 > $OUT/ncu-src-b8.csv 2> $OUT/ncu-err.txt
echo "ncu rc=$? lines $(wc -l < $OUT/ncu-src-b8.csv)"; tail -3 $OUT/ncu-err.txt
timeout 330 python -m kitsune.bench --workloads llama1b_decode_b1 --peers inductor_graph --json $OUT/llama1b.json 2>&1 \
  | grep -v -i warn | grep -E "^llama1b|rror" | tail -4
