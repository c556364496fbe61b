# Session 27, device call I: the kernel table after the operand-copies refactor (isolate.copies_past_l2 shared by the
# tuner's measure and the torch peer), llama_decode_b8 only: the same figures as call C expected.
source bench/kernels/device_env.sh
timeout 150 python bench/kernels/run.py --workloads llama_decode_b8 --no-default --json $OUT/kernels-b8.json 2>/dev/null | tail -6
