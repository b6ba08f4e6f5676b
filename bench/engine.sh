#!/usr/bin/env bash
# The engine's benchmarks (BENCHMARKS.md "The engine"): the strategies side by side on the same items, and the cascade
# against always-reflect. SmolLM2-135M generates; where a judge is used it is SmolLM2 too (the generator judging
# itself, as in Self-Refine) unless the run name says otherwise. Resumable like bench/spine.sh.
# Usage: bash bench/engine.sh [OUT_DIR]   (default bench/runs/engine; then `node bench/engine-table.mjs OUT_DIR`)
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/engine}
mkdir -p "$out"
run() { # run NAME FLAGS...
  local name=$1
  shift
  [ -f "$out/$name/summary.json" ] || node bin/reflect.js eval --task arithmetic --limit 100 --seed 0 --turns 3 "$@" --out "$out/$name" --json > /dev/null
}
# The strategies, each with its default signal: the verifier (reflect-retry, reflexion, cascade) or an LLM judge (self-refine).
run reflect-retry --strategy reflect-retry
run reflexion --strategy reflexion --related-lessons 2   # with recall of 2 lessons of other items (the default until this run)
# Reflexion with lessons of the same item only (the paper's per-instance memory; the default since this ablation).
run reflexion-same-item --strategy reflexion --related-lessons 0
run cascade --strategy cascade
run self-refine-judge --strategy self-refine --critic judge
run self-refine-verifier --strategy self-refine --critic verifier
# Cascade with a judge after the verifier, against always-reflect: every draft critiqued by the judge and refined,
# whatever the checks say (--stop-when none), keeping the best-judged draft.
run cascade-judge --strategy cascade --critic judge
run always-reflect --strategy self-refine --critic judge --stop-when none
