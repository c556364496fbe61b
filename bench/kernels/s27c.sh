# Session 27, device call C: (1) b8's decode attention partial at pipeline depths 2-5 and 4 / 8 warps, in the
# program's launch (attn_parts_ab.py, alternated rounds); (2) the kernel table (bench/kernels/run.py) with the
# torch peer now reading its operands from DRAM too (copies rotated past the L2), decode / conv / GEMM workloads.
source bench/kernels/device_env.sh
timeout 200 python bench/kernels/attn_parts_ab.py --workloads llama_decode_b8 --parts 0 --stages 2,3,4,5 --warps 4,8 \
  --rounds 3 --out $OUT/attn-stages-b8.json 2>&1 | grep -v -i warn | grep -E "parts|Error|error" | tail -10
timeout 330 python bench/kernels/run.py --workloads llama_decode_b1,llama_decode_b8,llama1b_decode_b1,inception_b8,mlp_gpt3_T256,mlp_gpt3_T1024,dlrm_b2048 \
  --no-default --json $OUT/kernels-rotated.json 2>/dev/null | tail -40
