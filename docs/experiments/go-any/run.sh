#!/bin/bash
# A Go network of any size, distilled from a 9 x 9 teacher (the Go network of commit 4b02854,
# fully connected heads, taken from git): self-play of the teacher at 9 x 9 (its shards carry
# ownership and score targets), a fresh network of distil.yaml, and a fit whose targets are
# half the shards' and half the teacher's outputs. Then a second fit from the first on more
# positions: CHUNKS more self-plays of 200 games (selfplay.yaml: every position stored, every
# game played to its end), all shards together, distil2.yaml. Resumable: each step is skipped
# when its output is there (a self-play killed midway plays its games again, beside the shards
# it finished).
#   run.sh [DIR]   DIR defaults to runs/go-any; GAMES (400), CHUNKS (6) and ENGINE, TRAINER
#                  (engine, trainer-bridge) from the environment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
dir=${1:-runs/go-any}
engine=${ENGINE:-engine}
trainer=${TRAINER:-trainer-bridge}
games=${GAMES:-400}
chunks=${CHUNKS:-6}
mkdir -p "$dir"
teacher=$dir/teacher
for ext in safetensors onnx int8.onnx; do
  [ -f "$teacher.$ext" ] && continue
  git -C "$root" show "4b02854:models/go/best.$ext" > "$teacher.$ext.part"
  mv "$teacher.$ext.part" "$teacher.$ext"
done
if [ ! -f "$dir/selfplay9.done" ]; then
  "$engine" selfplay --game go --model "$teacher.onnx" --games "$games" --seed 7 \
    --out "$dir/selfplay9"
  touch "$dir/selfplay9.done"
fi
[ -f "$dir/fresh.safetensors" ] ||
  "$trainer" init --game go --config "$here/distil.yaml" --out "$dir/fresh"
[ -f "$dir/any.safetensors" ] ||
  "$trainer" fit "$dir/selfplay9" --model "$dir/fresh.safetensors" --out "$dir" --name any \
    --config "$here/distil.yaml" --teacher "$teacher.safetensors" \
    --log "$dir/distil.jsonl"
for chunk in $(seq 1 "$chunks"); do
  out=$dir/selfplay9-$chunk
  [ -f "$out.done" ] && continue
  "$engine" selfplay --game go --model "$teacher.onnx" --config "$here/selfplay.yaml" \
    --games 200 --seed $((100 + chunk)) --out "$out"
  touch "$out.done"
done
# The fit reads one directory: links to every shard.
mkdir -p "$dir/all"
ln -f "$dir"/selfplay9*/*.safetensors "$dir/all/"
[ -f "$dir/any2.safetensors" ] ||
  "$trainer" fit "$dir/all" --model "$dir/any.safetensors" --out "$dir" --name any2 \
    --config "$here/distil2.yaml" --teacher "$teacher.safetensors" \
    --log "$dir/distil2.jsonl"
