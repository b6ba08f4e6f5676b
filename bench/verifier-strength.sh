#!/usr/bin/env bash
# The verifier's strength as a measured variable: one model, one task, one set of items and seeds, and reflect-retry's
# reflection under four feedback signals, from the weakest to the scorer itself — self-check (the model judges its
# own answer), another model (judge:OTHER judges it), shown-tests (the tests the prompt shows) and oracle (the scorer,
# labelled ORACLE IN THE LOOP in every table). Every attempt is scored after the fact on all of the item's tests, so
# the rows differ only in who tells the model it is wrong and when the loop stops. Then `reflect compare` puts the
# four side by side, paired by item against the self-check run, and `reflect report` draws them.
# Resumable: a finished run is not repeated; a killed one continues.
# Usage: bash bench/verifier-strength.sh [OUT_DIR] [MODEL] [OTHER] [EVAL FLAGS...]
#   defaults bench/runs/qwen/verifier-strength-1.5b, qwen2.5-coder-1.5b and qwen2.5-coder-0.5b as the other model;
#   TASK (default mbpp; humaneval also shows tests), LIMIT (default 50), SEEDS (default "1 2 3") and SIGNALS
#   (environment) narrow the grid.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/qwen/verifier-strength-1.5b}
model=${2:-qwen2.5-coder-1.5b}
other=${3:-qwen2.5-coder-0.5b}
shift $(($# < 3 ? $# : 3))
task=${TASK:-mbpp}
for seed in ${SEEDS:-1 2 3}; do
  runs=()
  for signal in ${SIGNALS:-self-check judge shown-tests oracle}; do
    from=$signal; [ "$signal" = judge ] && from="judge:$other"
    dir=$out/$task-$signal/seed-$seed
    [ -f "$dir/summary.json" ] || node bin/reflect.js eval --task "$task" --limit "${LIMIT:-50}" --strategy reflect-retry --turns 2 \
      --feedback-from "$from" --feedback detailed --max-tokens 512 --temperature 0.7 --top-p 0.8 --seed "$seed" \
      --model "$model" --out "$dir" "$@" > /dev/null
    runs+=("$dir")
  done
  echo "## seed $seed"
  node bin/reflect.js compare "${runs[@]}"
done
all=()
for seed in ${SEEDS:-1 2 3}; do for signal in ${SIGNALS:-self-check judge shown-tests oracle}; do all+=("$out/$task-$signal/seed-$seed"); done; done
node bin/reflect.js report "${all[@]}" --out "$out/report" --no-png --title "The verifier's strength: $model on $task, reflect-retry"
