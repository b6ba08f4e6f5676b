#!/usr/bin/env bash
# RRR kept as a GGUF LoRA on the unchanged Q4_1 base (BENCHMARKS.md): train Reflect, Retry, Reward
# on SmolLM2-135M with bench/rrr.sh's recipe (arithmetic items held out from the 100 evaluation items; rollouts sampled
# in the worker, as the published run was — `--sampler engine` in TRAIN FLAGS for the engine), export the
# adapter with `train export --lora`, then evaluate Q4_1 + LoRA sampled (T = 0.7, seeds 1–3, --confidence) on the 100 items of
# bench/controls.sh with the model's own reflection and with the placebo reflection. The untrained side is
# bench/runs/controls (the same items, modes and seeds on the Q4_1 file, which an untrained adapter reproduces).
# Resumable: each stage is skipped when its output exists; training resumes from its last checkpoint.
# Usage: bash bench/rrr-lora.sh [OUT_DIR] [SEED] [STEPS] [LR] [TRAIN FLAGS...]
#   default bench/runs/rrr-lora/seed-0, training seed 0, 30 steps, 2e-4; TRAIN FLAGS go to `train rrr`
#   (e.g. --resample-ties 2 --kl 0.05 for the stronger recipe, into another OUT_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/rrr-lora/seed-0}
seed=${2:-0}
steps=${3:-30}
lr=${4:-2e-4}
shift $(($# < 4 ? $# : 4))
mkdir -p "$out"
if [ ! -f "$out/train-result.json" ] || [ ! -s "$out/train-result.json" ]; then
  node bin/reflect.js train rrr --sampler worker --task arithmetic --limit 400 --exclude-run bench/runs/arithmetic-smollm2-135m-t2 --group 4 --batch-size 4 \
    --temperature 0.8 --retry-temperature 0.8 --steps "$steps" --checkpoint-every 5 --lr "$lr" --seed "$seed" --out "$out/train" --json "$@" > "$out/train-result.json.partial"
  mv "$out/train-result.json.partial" "$out/train-result.json"
fi
[ -f "$out/adapter.gguf.json" ] || node bin/reflect.js train export --run "$out/train" --lora --out "$out/adapter.gguf" > /dev/null   # writes adapter.gguf.json, its check
MODES=${MODES:-model placebo} RUNS=${RUNS:-seed-1 seed-2 seed-3} bash bench/controls.sh "$out/eval" smollm2-135m --lora "$out/adapter.gguf" --confidence
