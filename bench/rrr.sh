#!/usr/bin/env bash
# Reflect, Retry, Reward on SmolLM2-135M-Instruct on CPU (BENCHMARKS.md "Learning to reflect"): train on arithmetic items held
# out from the evaluation run, export to GGUF, and evaluate on the same 100 held-out items as the untrained model
# (bench/runs/arithmetic-smollm2-135m-t2, made by bench/spine.sh with the same eval flags). Resumable: each stage is
# skipped when its output exists, and training resumes from its last checkpoint.
# Usage: bash bench/rrr.sh [OUT_DIR] [STEPS] [LR]   (default bench/runs/rrr2, 30 steps, 2e-4; bench/runs/rrr is the
# first run, from before signal-free steps stopped updating the weights, exported f16 only)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/rrr2}
steps=${2:-30}
lr=${3:-2e-4}
before=bench/runs/arithmetic-smollm2-135m-t2
mkdir -p "$out"
node bin/reflect.js train rrr --sampler worker --task arithmetic --limit 400 --exclude-run "$before" --group 4 --batch-size 4 --temperature 0.8 --retry-temperature 0.8 \
  --steps "$steps" --checkpoint-every 5 --lr "$lr" --out "$out/train" --json > "$out/train-result.json"
# Exported twice: re-quantised to the base file's Q4_1 (`base`: an untrained adapter gives the Q4_1 file back, so the
# comparison with it is exact) and in f16.
for dtype in base f16; do
  [ -f "$out/trained-$dtype.gguf.json" ] || node bin/reflect.js train export --run "$out/train" --dtype "$dtype" --out "$out/trained-$dtype.gguf" > /dev/null
  [ -f "$out/after-$dtype/summary.json" ] || node bin/reflect.js eval --task arithmetic --limit 100 --turns 2 --model "$out/trained-$dtype.gguf" --out "$out/after-$dtype" > /dev/null
done
node bench/rrr-table.mjs "$out"
