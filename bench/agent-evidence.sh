#!/usr/bin/env bash
# The agent strategy (Reflexion over trials of a tool-call trajectory) against its controls on an environment task
# (BENCHMARKS.md, "Agents: Reflexion over trajectories against its controls"). TASK (default bfcl-multi-turn) with DATA
# (default base@1: the first user turn of each BFCL multi-turn base entry), the first LIMIT items (default 10), TRIALS
# trials (default 2), STEPS actor steps a user turn (default 4), the environment's own check as the only signal.
# Sampled (T = 0.7, top-p 0.8) over SEEDS (default 1 2), under each `--reflection` mode: model (a lesson about the
# failed trajectory), placebo (a fixed generic lesson, no call), none (the next trial with no lesson), resample (the
# equal-compute baseline: a fresh trial, nothing carried over). Runs go to OUT_DIR/agent-<mode>/seed-N; resumable.
# Then `node bench/evidence-pool.mjs --dir OUT_DIR --strategy agent --modes model,placebo,none,resample --seeds ...`.
# Usage: bash bench/agent-evidence.sh [OUT_DIR] [MODEL] [EVAL FLAGS...]   (default bench/runs/agent/bfcl-0.5b, qwen2.5-coder-0.5b)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/agent/bfcl-0.5b}
model=${2:-qwen2.5-coder-0.5b}
shift $(($# < 2 ? $# : 2))
for seed in ${SEEDS:-1 2}; do
  for mode in ${MODES:-model placebo none resample}; do
    dir=$out/agent-$mode/seed-$seed
    [ -f "$dir/summary.json" ] || node bin/reflect.js eval --task "${TASK:-bfcl-multi-turn}" --data "${DATA:-base@1}" --limit "${LIMIT:-10}" \
      --strategy agent --turns "${TRIALS:-2}" --steps "${STEPS:-4}" --reflection "$mode" \
      --temperature 0.7 --top-p 0.8 --seed "$seed" --model "$model" --out "$dir" "$@" > /dev/null
  done
done
node bench/evidence-pool.mjs --dir "$out" --strategy agent --modes "$(echo ${MODES:-model placebo none resample} | tr " " ,)" --seeds "$(echo ${SEEDS:-1 2} | tr " " ,)" --against resample
