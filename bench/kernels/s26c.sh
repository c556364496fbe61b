# Session 26, device call C (and D): heuristic defaults (KITSUNE_TUNING_DB=0: no database, no launch or
# placement entries) against the tuned database, both modes, per group of workloads given as $1; each setting
# in its own cache directory.
ROOT=$PWD
source bench/kernels/device_env.sh
W=$1
for DB in 0 1; do
  echo "== $W DB=$DB"
  KITSUNE_TUNING_DB=$DB KITSUNE_CACHE_DIR=/tmp/kc-db$DB timeout 270 python -m kitsune.bench --workloads $W --peers '' \
    --json $OUT/db$DB-$(echo $W | tr , _).json 2>&1 | grep -v -i warn | grep -v "return cls" | tail -14
done
