#!/usr/bin/env bash
# Is there a second task family for RRR? The base rate of 3-number Countdown with few-shot
# demonstrations: the first 100 three-number rows of TinyZero's Countdown test split
# ($REFLECTKIT_DATA/countdown/tinyzero_countdown_test.jsonl, selected into a temporary file, never the repository),
# reflect-retry, binary feedback, the model's own reflection, 2 turns, 3 demonstrations, --stop-at-answer, greedy and
# sampled (T = 0.7, seeds 1–3); SmolLM2-135M and Gemma 3 270M. Resumable: a run is skipped when its summary exists.
# Usage: bash bench/countdown3.sh [OUT_DIR] [MODEL...]   (default bench/runs/countdown3, smollm2-135m gemma-3-270m)
#   LIMIT (environment, default 100): the first LIMIT three-number rows, for a smoke run.
# It prints each model's runs (bench/table.mjs); `node bench/sampled-table.mjs OUT_DIR MODEL:OTHER` the sampled ones.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/countdown3}
shift $(($# > 0 ? 1 : 0))
models=("$@")
[ ${#models[@]} -gt 0 ] || models=(smollm2-135m gemma-3-270m)
data=${REFLECTKIT_DATA:-../shared/data}/countdown/tinyzero_countdown_test.jsonl
[ -f "$data" ] || { echo "$data: not found — set REFLECTKIT_DATA to the benchmark data folder" >&2; exit 2; }
items=$(mktemp --suffix=.jsonl)
trap 'rm -f "$items"' EXIT
node -e '
const lines = require("fs").readFileSync(process.argv[1], "utf8").split("\n");
const nums = (l, i) => {
  try { const n = JSON.parse(l).nums; if (Array.isArray(n)) return n; } catch {}
  console.error(`${process.argv[1]}:${i + 1}: not a Countdown row (a JSON object with a "nums" array)`); process.exit(2);
};
const three = lines.filter((l, i) => l.trim() !== "" && nums(l, i).length === 3).slice(0, Number(process.argv[2]));
if (three.length < Number(process.argv[2])) { console.error(`${process.argv[1]}: only ${three.length} three-number rows`); process.exit(2); }
process.stdout.write(three.join("\n") + "\n");' "$data" "${LIMIT:-100}" > "$items"
common=(--task countdown --data "$items" --turns 2 --shots 3 --stop-at-answer --confidence)
for model in "${models[@]}"; do
  run=$out/$model/greedy
  [ -f "$run/summary.json" ] || node bin/reflect.js eval "${common[@]}" --model "$model" --out "$run" > /dev/null
  for seed in 1 2 3; do
    run=$out/$model/seed-$seed
    [ -f "$run/summary.json" ] || node bin/reflect.js eval "${common[@]}" --model "$model" --temperature 0.7 --seed "$seed" --out "$run" > /dev/null
  done
done
for model in "${models[@]}"; do echo "$model"; node bench/table.mjs "$out/$model"; done
