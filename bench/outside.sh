#!/usr/bin/env bash
# Strategies that bring in the outside, and confidence over turns (BENCHMARKS.md): on the same 100
# arithmetic items as bench/controls.sh (bench/runs/sampled/items.jsonl), greedy, with answer confidence recorded:
#   alternatives  — SmolLM2, k = 4 candidates at T = 0.7, then the comparison (against controls/model/greedy);
#   rr-smollm2-shots3 / rr-gemma-shots3-t4 — reflect-retry with 3 demonstrations and --stop-at-answer, the setting the
#     debate runs in (Gemma 3 270M is the pretrained model: it needs the demonstrations); Gemma for 4 turns;
#   debate        — SmolLM2 and few-shot Gemma, 2 rounds, majority vote (ties to SmolLM2, the generator).
# Resumable: a finished run is not repeated. Usage: bash bench/outside.sh [OUT_DIR]   (default bench/runs/outside)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/outside}
items=bench/runs/sampled/items.jsonl
run() {
  local dir=$1
  shift
  [ -f "$dir/summary.json" ] || node bin/reflect.js eval --task arithmetic --data "$items" --seed 1 "$@" --out "$dir" > /dev/null
}
run "$out/alternatives-k4" --model smollm2-135m --strategy alternatives --candidates 4 --confidence
run "$out/rr-smollm2-shots3" --model smollm2-135m --shots 3 --stop-at-answer --turns 2 --confidence
run "$out/rr-gemma-shots3-t4" --model gemma-3-270m --shots 3 --stop-at-answer --turns 4 --confidence
run "$out/debate" --model smollm2-135m --agent gemma-3-270m --shots 3 --stop-at-answer --strategy debate --rounds 2
