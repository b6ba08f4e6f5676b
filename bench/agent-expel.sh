#!/usr/bin/env bash
# ExpeL's protocol (Zhao et al. 2024) for the agent strategy on TextWorldExpress: lessons written on a game's train
# split, shown on its held-out test items as notes of similar problems, against the same test items with no lessons of
# other items (Reflexion's per-item memory alone).
#   1. OUT_DIR/train: the first LIMIT_TRAIN (default 20) train seeds of GAME (default coin; `--data GAME:train`), with
#      `--reflection model`, writing its lessons to OUT_DIR/train/memory.sqlite. Never scored: its items are for lessons.
#   2. OUT_DIR/expel/seed-N: the first LIMIT (default 10) test items (`--data GAME`) with `--related-lessons 3`
#      recalled from the train run's memory (`--related-from OUT_DIR/train/memory.sqlite`, only read). The run's own
#      lessons go to its own memory (OUT_DIR/expel/seed-N/memory.sqlite): with `--memory` the train file instead, they
#      would reach the run's later test items as related lessons, and the next seed's run of the same items as their own.
#   3. OUT_DIR/no-lessons/seed-N: the same test items with `--related-lessons 0` and a fresh memory.
# Sampled as bench/agent-evidence.sh samples (T = 0.7, top-p 0.8, `--seed N` over SEEDS, default 1; the train run
# takes the first seed), TRIALS trials (default 2), STEPS actor steps (default: the game's 50). Resumable: a run with a
# summary.json is not run again. Then Acc@t1 and final of both arms and their paired difference, by
# bench/evidence-pool.mjs.
# Departure from ExpeL: ExpeL distils insights and retrieves successful training trajectories; here the training run's
# lessons (written after failed trials) are recalled by text relevance, and each test episode keeps Reflexion's lessons
# of its own item between its trials, in both arms.
# Usage: bash bench/agent-expel.sh [OUT_DIR] [MODEL] [EVAL FLAGS...]   (default bench/runs/agent/expel-coin-0.5b, qwen2.5-coder-0.5b)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/agent/expel-coin-0.5b}
model=${2:-qwen2.5-coder-0.5b}
shift $(($# < 2 ? $# : 2))
game=${GAME:-coin}
seeds=${SEEDS:-1}
first_seed=${seeds%% *}
steps=()
[ -z "${STEPS:-}" ] || steps=(--steps "$STEPS")

eval_run() { # DIR DATA LIMIT SEED [FLAGS...]
  local dir=$1 data=$2 limit=$3 seed=$4
  shift 4
  [ -f "$dir/summary.json" ] || node bin/reflect.js eval --task textworld-express --data "$data" --limit "$limit" \
    --strategy agent --turns "${TRIALS:-2}" "${steps[@]}" --reflection model \
    --temperature 0.7 --top-p 0.8 --seed "$seed" --model "$model" --out "$dir" "$@" > /dev/null
}

eval_run "$out/train" "$game:train" "${LIMIT_TRAIN:-20}" "$first_seed" --memory "$out/train/memory.sqlite" --related-lessons 0 "$@"
[ -f "$out/train/memory.sqlite" ] || { echo "agent-expel: the train run left no $out/train/memory.sqlite" >&2; exit 1; }
for seed in $seeds; do
  eval_run "$out/expel/seed-$seed" "$game" "${LIMIT:-10}" "$seed" --related-from "$out/train/memory.sqlite" --related-lessons 3 "$@"
  eval_run "$out/no-lessons/seed-$seed" "$game" "${LIMIT:-10}" "$seed" --related-lessons 0 "$@"
done
node bench/evidence-pool.mjs --dir "$out" --strategy "" --modes expel,no-lessons --seeds "$(echo $seeds | tr " " ,)" --against no-lessons
