# Session 24, call H: is DEFAULT_PDL = 1 right for programs outside the suite (no database entry)? PDL 1 / 0 / 2 on
# the models of bench/models, bulk-sync, alternated.
source bench/kernels/device_env.sh
timeout 520 python bench/kernels/pdl_ab.py --workloads bench/models/resnet18.py,bench/models/bert_layer.py,bench/models/gpt2.py --settings 1,0,2 --rounds 3 --out $OUT/pdl-unseen-session24.json 2>&1 | grep -v -i "warn\|return cls"
