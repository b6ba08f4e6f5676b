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
run prefix-reuse-off --task countdown --data "$countdown" --limit 16 --turns 4 --no-prefix-reuse
# Accuracy: 100 items, binary feedback (the papers' setting), greedy decoding, one sequence (reproducible: a 2-turn
# run and the first two turns of a 4-turn run are identical, checked in dev/LOG.md).
for turns in 2 4; do
  run "arithmetic-smollm2-135m-t$turns" --task arithmetic --limit 100 --seed 0 --turns "$turns" --model smollm2-135m
done
run arithmetic-gemma-3-270m-t2 --task arithmetic --limit 100 --seed 0 --turns 2 --model gemma-3-270m
run countdown-smollm2-135m-t4 --task countdown --data "$countdown" --limit 100 --turns 4 --model smollm2-135m
run arithmetic-gemma-3-270m-t4 --task arithmetic --limit 100 --seed 0 --turns 4 --model gemma-3-270m
run countdown-gemma-3-270m-t4 --task countdown --data "$countdown" --limit 100 --turns 4 --model gemma-3-270m
# Few-shot: 3 generated demonstrations as chat turns and attempts that end at </answer> (`--shots 3
# --stop-at-answer`), so the pretrained Gemma answers instead of echoing the prompt; SmolLM2 alongside for comparison.
for model in gemma-3-270m smollm2-135m; do
  run "arithmetic-$model-shots3-t4" --task arithmetic --limit 100 --seed 0 --turns 4 --model "$model" --shots 3 --stop-at-answer
done
run countdown-smollm2-135m-shots3-t4 --task countdown --data "$countdown" --limit 100 --turns 4 --model smollm2-135m --shots 3 --stop-at-answer
