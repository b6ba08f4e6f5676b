#!/usr/bin/env bash
# Where `train rrr` samples its rollouts: the same short RRR configuration — the same items, seed, batch,
# group and token limits — with `--sampler worker` (Hugging Face generate in the PyTorch worker) and `--sampler engine`
# (node-llama-cpp on the base GGUF, the LoRA adapter hot-swapped after each update), run alternately, a fresh run folder
# each time, so the two sides share the machine's drift. Then bench/rrr-sampler-table.mjs prints the median seconds per
# step — whole step, sampling, sync, training — per side, the difference with a bootstrap interval, and the engine's
# sampler/learner mismatch. Run it on a quiet machine; every run is a full `train rrr` (worker start, first attempts).
# Usage: bash bench/rrr-sampler.sh [OUT_DIR] [ROUNDS] [STEPS] [TRAIN FLAGS...]
#   default bench/runs/rrr-sampler, 3 rounds (3 runs a side), 4 steps a run; TRAIN FLAGS go to both sides.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/rrr-sampler}
rounds=${2:-3}
steps=${3:-4}
shift $(($# < 3 ? $# : 3))
mkdir -p "$out"
run() { # side round [TRAIN FLAGS...]
  local side=$1 round=$2
  shift 2
  local dir="$out/$side-$round"
  [ -s "$dir/result.json" ] && return 0
  rm -rf "$dir/train"
  mkdir -p "$dir"
  node bin/reflect.js train rrr --sampler "$side" --model smollm2-135m --task arithmetic --limit 64 --group 4 --batch-size 4 \
    --temperature 0.8 --retry-temperature 0.8 --attempt-max-tokens 96 --reflection-max-tokens 64 --steps "$steps" \
    --checkpoint-every "$steps" --lr 2e-4 --seed 0 --out "$dir/train" --json "$@" > "$dir/result.json.partial" 2> "$dir/stderr.log"
  mv "$dir/result.json.partial" "$dir/result.json"
}
for r in $(seq 1 "$rounds"); do
  # Alternate which side goes first, so neither always runs on a cooler (or warmer) machine.
  if [ $((r % 2)) -eq 1 ]; then run worker "$r" "$@"; run engine "$r" "$@"; else run engine "$r" "$@"; run worker "$r" "$@"; fi
done
node bench/rrr-sampler-table.mjs "$out"
