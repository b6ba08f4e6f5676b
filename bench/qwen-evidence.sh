#!/usr/bin/env bash
# Reflection on Qwen2.5-Coder Instruct against its controls, with the scorer kept out of the loop (BENCHMARKS.md,
# "Reflection against its controls, the scorer out of the loop"). MBPP (ReflectEvo's 500-item test
# split, the first LIMIT items), 2 attempts, the feedback from the one test the prompt shows (`--feedback-from
# shown-tests`, detailed: the failing assert and the value returned), every attempt scored after the fact on all of the
# item's tests. Sampled (T = 0.7, top-p 0.8: the model's own generation settings) over seeds 1–3, under each
# `--reflection` mode: model (the model reflects), placebo (a fixed generic reflection, no call), placebo-other (another
# item's reflection from the model run of the same seed), none (the retry follows the feedback), resample (the
# equal-compute baseline: a fresh sample of the task alone, no feedback). Runs go to OUT_DIR/<strategy>-<mode>/seed-N; resumable (a finished run is not repeated; a killed one
# continues). Then `reflect report` pairs the modes by item.
# Usage: bash bench/qwen-evidence.sh [OUT_DIR] [MODEL] [EVAL FLAGS...]
#   default bench/runs/qwen/evidence-1.5b and qwen2.5-coder-1.5b; LIMIT (default 50), MODES, STRATEGIES and SEEDS
#   (environment) narrow the grid, e.g. MODES="model none" SEEDS="1".
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/qwen/evidence-1.5b}
model=${2:-qwen2.5-coder-1.5b}
shift $(($# < 2 ? $# : 2))
runs=()
for seed in ${SEEDS:-1 2 3}; do
  for strategy in ${STRATEGIES:-reflect-retry}; do
    for mode in ${MODES:-model placebo placebo-other none resample}; do
      dir=$out/$strategy-$mode/seed-$seed
      # The other-item placebo shows this item another item's reflection from the model run of the same seed.
      donor=(); [ "$mode" = placebo-other ] && donor=(--placebo-from "$out/$strategy-model/seed-$seed")
      [ -f "$dir/summary.json" ] || node bin/reflect.js eval --task mbpp --limit "${LIMIT:-50}" --strategy "$strategy" --turns 2 \
        --feedback-from shown-tests --feedback detailed --reflection "$mode" "${donor[@]}" --max-tokens 512 \
        --temperature 0.7 --top-p 0.8 --seed "$seed" --model "$model" --out "$dir" "$@" > /dev/null
      runs+=("$dir")
    done
  done
done
node bin/reflect.js report "${runs[@]}" --out "$out/report" --no-png --title "Qwen2.5-Coder on MBPP, shown-test feedback · $model"
