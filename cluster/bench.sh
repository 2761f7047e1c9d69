#!/usr/bin/env bash
# Self-play throughput on one machine, local against Ray, in one run:
#   cluster/bench.sh [ROUNDS] [GAMES] [GAME] [NODES] [GAMES_PER_TASK]      (as root)
# A Ray cluster of NODES nodes (default 1) of one CPU each on 127.0.0.1, inside a network and
# PID namespace of its own (Ray listens on every interface; the namespace keeps it on loopback
# and ends it with the script). Each round plays GAMES games of GAME's shipped network with the
# built-in config on one thread (`inference.intra_threads: 1`, as a task of `cpus_per_task: 1`
# runs), first with `engine selfplay` in one process, then with `engine selfplay --ray` as tasks
# of GAMES_PER_TASK games (default: the config's `selfplay.ray.games_per_task`), and prints
# both positions/s and the Ray rate per node.
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
games=${2:-48}
game=${3:-liuzhou}
nodes=${4:-1}
per_task=${5:-}
engine=${ENGINE:-target/release/engine}

if [ -z "${ENGINE_BENCH_INSIDE:-}" ]; then
    exec env ENGINE_BENCH_INSIDE=1 unshare --net --pid --fork --mount-proc "$0" "$@"
fi
ip link set lo up
work=$(mktemp -d)
export RAY_USAGE_STATS_ENABLED=0 TMPDIR=$work
ray_start() {
    python3 -m ray.scripts.scripts start --node-ip-address=127.0.0.1 --num-cpus=1 \
        --disable-usage-stats "$@" >/dev/null 2>&1
}
ray_start --head --port=6379 --include-dashboard=false --temp-dir="$work/ray"
for _ in $(seq 2 "$nodes"); do ray_start --address=127.0.0.1:6379; done
config=$work/bench.yaml
printf 'game: {name: %s}\ninference: {intra_threads: 1}\n' "$game" > "$config"
if [ -n "$per_task" ]; then
    printf 'selfplay: {ray: {games_per_task: %s}}\n' "$per_task" >> "$config"
fi

model=models/$game/best.onnx
rate() { sed -n 's/.*positions (\([0-9.]*\)\/s).*/\1/p' | tail -1; }
for round in $(seq "$rounds"); do
    rm -rf "$work/local" "$work/ray-out"
    local_rate=$("$engine" selfplay --config "$config" --model "$model" --games "$games" \
        --out "$work/local" --seed "$round" 2>/dev/null | rate)
    ray_rate=$("$engine" selfplay --config "$config" --model "$model" --games "$games" \
        --out "$work/ray-out" --seed "$round" --ray 127.0.0.1:6379 2>/dev/null | rate)
    echo "round $round: local $local_rate positions/s, ray $ray_rate positions/s on $nodes nodes" \
        "($(echo "$ray_rate $nodes" | awk '{printf "%.1f", $1 / $2}') per node)"
done
rm -rf "$work"
