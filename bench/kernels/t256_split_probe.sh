#!/bin/bash
# T256 fc1 as 256 x 128 tiles split in two (L2 -> SM traffic 453 instead of 604 MB): the harness's per-kernel time
# of k0 for the given configs (fc2 keeps its tuned config where the row-tile alignment lets it).
# usage: bench/kernels/t256_split_probe.sh OUTDIR 'cfg-json' ...
out=$1; shift
for cfg in "$@"; do
  d=$(mktemp -d); python3 - "$d" "$cfg" <<'PY'
import json, sys
base = json.load(open("kitsune/schedule/tuned.json"))
db = {k: dict(v, config=json.loads(sys.argv[2])) for k, v in base.items() if "M=256,N=6144,K=12288" in k}
json.dump(db, open(sys.argv[1] + "/tuning.json", "w"))
PY
  echo "== fc1 $cfg"
  KITSUNE_CACHE_DIR=$d python3 -m kitsune.bench --workloads mlp_gpt3_T256 --modes bulk-sync --peers '' --json $out/t256-$(echo "$cfg" | tr -dc 'a-zA-Z0-9').json 2>&1 | grep -E "per kernel|mlp_gpt3_T256 "
done
