#!/usr/bin/env bash
# Reflection controls (BENCHMARKS.md "Reflection or theatre"): does the reflection's content help, or only a second try? The same
# 100 arithmetic items as bench/sampled.sh (bench/runs/sampled/items.jsonl), 2 turns, reflect-retry with binary
# feedback, under each `--reflection` mode — model (the model reflects), placebo (a fixed generic reflection, no model
# call), none (the retry follows the feedback, no reflection turn) — greedy (seed 1) and at T = 0.7 (seeds 1–3).
# Runs go to OUT_DIR/<mode>/{greedy,seed-1,seed-2,seed-3}; resumable (a finished run is not repeated). Then
# `reflect report` pairs the modes by item: per mode Acc@t1, Acc@t2, Δ, and Δ(model) − Δ(none), Δ(model) − Δ(placebo),
# Δ(placebo) − Δ(none) with 95% bootstrap intervals over items (printed, in OUT_DIR/report/report.html and in
# OUT_DIR/report/reflection-controls.json).
# Usage: bash bench/controls.sh [OUT_DIR] [MODEL] [EVAL FLAGS...]
#   default bench/runs/controls and smollm2-135m; MODEL may be a .gguf file (the RRR-trained model and its control);
#   EVAL FLAGS go to every `reflect eval` (e.g. --limit 3 for a trial run into another OUT_DIR, --lora FILE).
#   MODES and RUNS (environment) narrow the grid, e.g. MODES="model placebo" RUNS="seed-1 seed-2 seed-3".
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/controls}
model=${2:-smollm2-135m}
shift $(($# < 2 ? $# : 2))
items=bench/runs/sampled/items.jsonl
runs=()
for mode in ${MODES:-model placebo none}; do
  for run in ${RUNS:-greedy seed-1 seed-2 seed-3}; do
    if [ "$run" = greedy ]; then sampling=(--temperature 0 --seed 1); else sampling=(--temperature 0.7 --seed "${run#seed-}"); fi
    dir=$out/$mode/$run
    [ -f "$dir/summary.json" ] || node bin/reflect.js eval --task arithmetic --data "$items" --turns 2 --reflection "$mode" "${sampling[@]}" --model "$model" --out "$dir" "$@" > /dev/null
    runs+=("$dir")
  done
done
node bin/reflect.js report "${runs[@]}" --out "$out/report" --no-png --title "reflection controls · $model"
