#!/bin/bash
# A game's shipped network carried into KataGo's network and trained on with the recipe that
# learned most per CPU-hour in the recipe comparison ("kataint8", docs/experiments/liuzhou.md):
# GAMES self-play games of the shipped network (int8), a fresh network of GAME-distil.yaml fitted
# on them with nine tenths of every target the shipped network's outputs, then the loop of
# GAME-loop.yaml from it for 600 CPU minutes. Resumable: each step is skipped when its output is
# there, and the loop continues where it stopped. Rate the loop's best afterwards, e.g.
#   engine match --game liuzhou --black net:model=DIR/loop/best.onnx,time=0.1,batch=16 \
#     --white net:time=0.1,batch=16 --games 100 --parallel 2 --openings 4 --seed 1
#   (then --white alphabeta:movetime=100 and alphabeta:movetime=1000; Xiangqi at 1 s a move,
#   net:…,time=1 against alphabeta:movetime=1000, --openings 2)
#   run.sh [DIR]   DIR defaults to runs/GAME-kata; GAME (liuzhou or xiangqi), GAMES (liuzhou
#                  2000, xiangqi 300) and ENGINE, TRAINER (engine, trainer-bridge) from the
#                  environment.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$here/../../..
game=${GAME:-liuzhou}
case $game in
  liuzhou) games=${GAMES:-2000} ;;
  xiangqi) games=${GAMES:-300} ;;
  *) echo "GAME: liuzhou or xiangqi, not $game" >&2; exit 2 ;;
esac
dir=${1:-runs/$game-kata}
engine=${ENGINE:-engine}
trainer=${TRAINER:-trainer-bridge}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
teacher=$root/models/$game/best
if [ ! -f "$dir/selfplay.done" ]; then
  "$engine" selfplay --game "$game" --model "$teacher.onnx" --precision int8 --games "$games" \
    --seed 7 --out "$dir/selfplay"
  touch "$dir/selfplay.done"
fi
[ -f "$dir/fresh.safetensors" ] ||
  "$trainer" init --game "$game" --config "$here/$game-distil.yaml" --out "$dir/fresh"
[ -f "$dir/kata.safetensors" ] ||
  "$trainer" fit "$dir/selfplay" --model "$dir/fresh.safetensors" --out "$dir" --name kata \
    --config "$here/$game-distil.yaml" --teacher "$teacher.safetensors" --log "$dir/distil.jsonl"
sed "s|@DIR@|$dir|g" "$here/$game-loop.yaml" > "$dir/loop.yaml"
"$engine" train --config "$dir/loop.yaml"
