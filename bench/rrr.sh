#!/usr/bin/env bash
# Reflect, Retry, Reward on SmolLM2-135M-Instruct on CPU (issue 6, BENCHMARKS.md): train on arithmetic items held
# out from the evaluation run, export to GGUF, and evaluate on the same 100 held-out items as the untrained model
# (bench/runs/arithmetic-smollm2-135m-t2, made by bench/spine.sh with the same eval flags). Resumable: each stage is
# skipped when its output exists, and training resumes from its last checkpoint.
# Usage: bash bench/rrr.sh [OUT_DIR] [STEPS]   (default bench/runs/rrr, 30 steps)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/rrr}
steps=${2:-30}
before=bench/runs/arithmetic-smollm2-135m-t2
mkdir -p "$out"
node bin/reflect.js train rrr --task arithmetic --limit 400 --exclude-run "$before" --group 4 --batch-size 4 --temperature 0.8 --retry-temperature 0.8 \
  --steps "$steps" --checkpoint-every 5 --lr 2e-4 --out "$out/train" --json > "$out/train-result.json"
[ -f "$out/trained.gguf.json" ] || node bin/reflect.js train export --run "$out/train" --out "$out/trained.gguf" > /dev/null
[ -f "$out/after/summary.json" ] || node bin/reflect.js eval --task arithmetic --limit 100 --turns 2 --model "$out/trained.gguf" --out "$out/after" > /dev/null
node bench/rrr-table.mjs "$out"
