#!/usr/bin/env bash
# Reflexion against its controls (BENCHMARKS.md, "Reflexion against its controls"): the README's first run — Reflexion
# on 100 generated arithmetic items, 2 trials, lessons of at most 48 tokens, binary feedback — under each
# `--reflection` mode: model (the model writes the lesson), placebo (a fixed generic lesson in the notes, no model
# call), none (no lesson: the second trial sees the first trial's prompt). Greedy (the README's setting: the items
# generated with seed 0), then at T = 0.7 with seeds 1–3 on the same 100 items read from bench/runs/sampled/items.jsonl
# (the seed-0 items written out, as the reflect-retry controls use them), so an item's score is its mean over seeds.
# Runs go to OUT_DIR/<mode>/{greedy,seed-1,seed-2,seed-3}; resumable (a finished run is not repeated). Then
# `reflect report` pairs the modes by item: per mode Acc@t1, Acc@t2, Δ, and Δ(model) − Δ(placebo) etc. with 95 %
# bootstrap intervals over items (printed, and in OUT_DIR/report/reflection-controls.json).
# Usage: bash bench/controls-reflexion.sh [OUT_DIR] [MODEL] [EVAL FLAGS...]
#   default bench/runs/controls-reflexion and smollm2-135m; RUNS (environment) narrows the grid, e.g. RUNS=greedy.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/controls-reflexion}
model=${2:-smollm2-135m}
shift $(($# < 2 ? $# : 2))
runs=()
for run in ${RUNS:-greedy seed-1 seed-2 seed-3}; do
  for mode in model placebo none; do
    if [ "$run" = greedy ]; then sampling=(--temperature 0); else sampling=(--data bench/runs/sampled/items.jsonl --temperature 0.7 --seed "${run#seed-}"); fi
    dir=$out/$mode/$run
    [ -f "$dir/summary.json" ] || node bin/reflect.js eval --task arithmetic --strategy reflexion --turns 2 --reflection-max-tokens 48 --reflection "$mode" "${sampling[@]}" --model "$model" --out "$dir" "$@" > /dev/null
    runs+=("$dir")
  done
done
node bin/reflect.js report "${runs[@]}" --out "$out/report" --no-png --title "Reflexion against its controls · $model"
