#!/usr/bin/env bash
# The first-attempt guard (BENCHMARKS.md "The adapter on the retry only"): RRR's trained adapters evaluated
# with `--lora-on retry` — the first attempt on the unchanged Q4_1 base (as RRR's training sampled it), the reflection
# and the retry on Q4_1 + LoRA — under the protocol of bench/rrr-evidence.sh (the 100 held-out items, reflect-retry,
# its own reflection, 2 turns, T = 0.7, sampling seeds 1–3, --confidence). Needs each run's adapter.gguf (written by
# bench/rrr-lora.sh). Runs go to RUN_DIR/eval-guard/model/seed-N; resumable.
# Usage: bash bench/rrr-guard.sh RUN_DIR...   e.g. bench/runs/rrr-lora/seed-{0,1,2}
# Then it prints each run and the runs pooled against the untrained model (bench/runs/$CONTROL/model, default
# controls-3.22.1: on the same node-llama-cpp build the guard reproduces its first attempts reply for reply, so the
# Acc@t1 difference is 0 by construction; `MODES=model RUNS="seed-1 seed-2 seed-3" bash bench/controls.sh
# bench/runs/controls-3.22.1 smollm2-135m --confidence` makes it), against the same adapter on every call
# (RUN_DIR/eval/model) and against few-shot Gemma (bench/runs/rrr-lora/gemma-shots3), paired by item.
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -gt 0 ] || { echo "usage: bash bench/rrr-guard.sh RUN_DIR... (each with adapter.gguf)" >&2; exit 2; }
for run in "$@"; do
  done_runs=$(ls "$run"/eval-guard/model/seed-{1,2,3}/summary.json 2> /dev/null | wc -l)
  [ "$done_runs" -lt 3 ] || continue
  [ -f "$run/adapter.gguf" ] || { echo "$run/adapter.gguf: not found — bench/rrr-lora.sh writes it" >&2; exit 2; }
  MODES=model RUNS="seed-1 seed-2 seed-3" bash bench/controls.sh "$run/eval-guard" smollm2-135m --lora "$run/adapter.gguf" --lora-on retry --confidence > /dev/null
done
control=${CONTROL:-controls-3.22.1}
rel() { echo "${1#bench/runs/}"; }
pooled=""
pairs=()
for run in "$@"; do
  r=$(rel "$run")/eval-guard/model
  pooled+="${pooled:++}$r"
  pairs+=("$r:$control/model" "$r:$(rel "$run")/eval/model")
done
pairs+=("$pooled:$control/model" "$pooled:rrr-lora/gemma-shots3")
node bench/sampled-table.mjs bench/runs "${pairs[@]}"
