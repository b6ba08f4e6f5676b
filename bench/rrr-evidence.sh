#!/usr/bin/env bash
# The evidence table of RRR over training seeds (BENCHMARKS.md "The evidence: RRR over three training seeds"): RRR on SmolLM2-135M with
# bench/rrr-lora.sh's recipe, one run per training seed, each exported as a GGUF LoRA on the unchanged Q4_1 base and
# evaluated sampled (T = 0.7, seeds 1–3) on the 100 held-out items of bench/controls.sh with its own reflection; then
# few-shot Gemma 3 270M (3 demonstrations, --stop-at-answer) under the same protocol (2 turns, own reflection, the
# same items and sampling seeds); then the placebo reflection for every trained seed. The untrained control is
# bench/runs/controls (run it first: `bash bench/controls.sh`). Stages run in that order, one model process at a time;
# each is skipped when its output exists, so the script resumes where it was stopped.
# Usage: bash bench/rrr-evidence.sh [TRAINING SEEDS...]   (default 0 1 2)
#   NAME (environment, default rrr-lora) names the runs' folder under bench/runs; TRAIN_FLAGS go to every `train rrr`,
#   e.g. NAME=rrr-strong TRAIN_FLAGS="--resample-ties 2 --kl 0.05" for the stronger recipe. Few-shot Gemma's runs are
#   shared (bench/runs/rrr-lora/gemma-shots3). CONTROL (default controls) names the untrained runs under bench/runs:
#   controls-3.22.1 for evaluations on node-llama-cpp 3.22.1, whose sampled replies differ from 3.21.1's at the same
#   seed (bench/runs/controls ran on 3.21.1; BENCHMARKS.md "The adapter on the retry only"). controls-3.22.1 holds
#   model runs only so far: make its placebo first (MODES=placebo RUNS="seed-1 seed-2 seed-3" bash bench/controls.sh
#   bench/runs/controls-3.22.1 smollm2-135m --confidence).
# Then it prints the tables (bench/sampled-table.mjs): each trained seed and the seeds pooled against the untrained
# model and against few-shot Gemma, the placebo against the untrained placebo, and what training added to the
# reflection's content ((own − placebo) trained − (own − placebo) untrained), paired by item.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=("$@")
[ ${#seeds[@]} -gt 0 ] || seeds=(0 1 2)
name=${NAME:-rrr-lora}
control=${CONTROL:-controls}
read -r -a flags <<< "${TRAIN_FLAGS:-}"
items=bench/runs/sampled/items.jsonl
for s in "${seeds[@]}"; do MODES=model bash bench/rrr-lora.sh "bench/runs/$name/seed-$s" "$s" 30 2e-4 "${flags[@]}" > /dev/null; done
for seed in 1 2 3; do
  run=bench/runs/rrr-lora/gemma-shots3/seed-$seed
  [ -f "$run/summary.json" ] || node bin/reflect.js eval --task arithmetic --data "$items" --turns 2 --temperature 0.7 --seed "$seed" \
    --model gemma-3-270m --shots 3 --stop-at-answer --out "$run" > /dev/null
done
for s in "${seeds[@]}"; do MODES="model placebo" bash bench/rrr-lora.sh "bench/runs/$name/seed-$s" "$s" 30 2e-4 "${flags[@]}" > /dev/null; done
pooled=$(printf "$name/seed-%s/eval/model+" "${seeds[@]}")
pooled=${pooled%+}
placebo=${pooled//\/eval\/model/\/eval\/placebo}
pairs=("$pooled:$control/model" "$pooled:rrr-lora/gemma-shots3" "$placebo:$control/placebo" "$pooled:$placebo:$control/model:$control/placebo")
for s in "${seeds[@]}"; do pairs+=("$name/seed-$s/eval/model:$control/model" "$name/seed-$s/eval/placebo:$control/placebo"); done
node bench/sampled-table.mjs bench/runs "${pairs[@]}"
