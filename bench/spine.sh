#!/usr/bin/env bash
# The spine's benchmarks (BENCHMARKS.md): accuracy by turn on both embedded models and both task families, episode
# throughput at 1 vs 4 parallel sequences, and prompt tokens evaluated with and without KV-cache prefix reuse.
# Every run folder is resumable: run the script again after a kill and finished episodes are kept; a finished run
# is not run again (its wall time would be lost).
# Usage: bash bench/spine.sh [OUT_DIR]   (default bench/runs; then `node bench/table.mjs OUT_DIR` prints the tables)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs}
countdown=${REFLECTKIT_DATA:-../shared/data}/countdown/tinyzero_countdown_test.jsonl
mkdir -p "$out"
run() { # run NAME FLAGS...
  local name=$1
  shift
  [ -f "$out/$name/summary.json" ] || node bin/reflect.js eval "$@" --out "$out/$name" --json > /dev/null
}

# Throughput: the same 40 items at 1 and at 4 parallel sequences.
run throughput-seq1 --task arithmetic --limit 40 --seed 1 --turns 4 --concurrency 1
run throughput-seq4 --task arithmetic --limit 40 --seed 1 --turns 4 --concurrency 4
# Prefix reuse: the same 16 Countdown items with and without KV-cache reuse across the turns of an episode.
run prefix-reuse-on --task countdown --data "$countdown" --limit 16 --turns 4
# Accuracy: 100 items, binary feedback (the papers' setting), greedy decoding, one sequence (reproducible).
for model in smollm2-135m gemma-3-270m; do
  for turns in 2 4; do
    run "arithmetic-$model-t$turns" --task arithmetic --limit 100 --seed 0 --turns "$turns" --model "$model"
  done
done
run prefix-reuse-off --task countdown --data "$countdown" --limit 16 --turns 4 --no-prefix-reuse
for model in smollm2-135m gemma-3-270m; do
  run "countdown-$model-t4" --task countdown --data "$countdown" --limit 100 --turns 4 --model "$model"
done
