#!/usr/bin/env bash
# SFT on the data pipeline's D+ (BENCHMARKS.md): SmolLM2-135M-Instruct fine-tuned (LoRA) on the 24 reflections
# that fixed an answer in bench/runs/data/arithmetic-200 (bench/data.sh), exported to GGUF twice (f16, and re-quantised
# to the base file's Q4_1), and evaluated on the spine's 100 arithmetic items like the untrained model. D+ questions
# that also occur among those 100 are left out of the comparison by bench/sft-table.mjs (the held-out rows).
# Resumable: each stage is skipped when its output exists, and training resumes from its last checkpoint.
# Usage: bash bench/sft.sh [OUT_DIR]   (default bench/runs/sft)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/sft}
data=bench/runs/data/arithmetic-200-export/d_plus.trl-sft.jsonl
mkdir -p "$out"
node bin/reflect.js train sft --data "$data" --steps 12 --batch-size 8 --lr 1e-4 --checkpoint-every 4 --out "$out/train" --json > "$out/train-result.json"
for dtype in base f16; do
  [ -f "$out/trained-$dtype.gguf.json" ] || node bin/reflect.js train export --run "$out/train" --dtype "$dtype" --out "$out/trained-$dtype.gguf" > /dev/null
  [ -f "$out/after-$dtype/summary.json" ] || node bin/reflect.js eval --task arithmetic --limit 100 --turns 2 --model "$out/trained-$dtype.gguf" --out "$out/after-$dtype" > /dev/null
done
node bench/sft-table.mjs "$out" "$data"
