#!/bin/bash
# Liuzhou from one fresh network, three training runs of equal wall time one after another
# (PUCT as shipped, Gumbel at 16 and at 32 simulations), then every run's best model every
# 3 minutes from 6 to 21 and at 25 against the PUCT run's final best. Resumable: finished runs
# and matches are kept.
#   run.sh [DIR]    DIR defaults to runs/gumbel-train; ENGINE names the engine binary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=${1:-runs/gumbel-train}
engine=${ENGINE:-engine}
python3 "$here/make_configs.py" "$here/../../../configs/liuzhou.yaml" "$dir"
for run in puct g16 g32; do
  [ -f "$dir/$run/done" ] && continue
  if [ "$run" != puct ]; then
    # The same starting network for every run (a fresh one is drawn at random).
    mkdir -p "$dir/$run/models"
    cp "$dir"/puct/models/0000.onnx "$dir"/puct/models/0000.safetensors "$dir/$run/models/"
  fi
  TIMEFORMAT="$run: %R s wall, %U s user, %S s system"
  { time "$engine" train --game liuzhou --config "$dir/$run.yaml" --run-dir "$dir/$run" \
      > "$dir/$run/train.log" 2>&1; } 2> "$dir/$run/time.txt"
  touch "$dir/$run/done"
done
mkdir -p "$dir/rate"
python3 "$here/rate.py" "$dir" | while read -r name a b; do
  log=$dir/rate/$name.log
  grep -q "^score" "$log" 2>/dev/null && continue
  "$engine" match --game liuzhou --black "net:model=$a,visits=100,batch=16" \
    --white "net:model=$b,visits=100,batch=16" --games 40 --parallel 2 --openings 4 > "$log" 2>&1
done
python3 "$here/rate.py" "$dir" --table --svg "$dir/gumbel-train.svg"
