#!/usr/bin/env bash
# Sampled evaluation of trained models (BENCHMARKS.md). Greedy decoding of SmolLM2 on arithmetic hangs on a
# knife-edge first token ("The answer is" vs working it out), so a small change of weights or numerics moves greedy
# accuracy by ten points either way. Sampling at T = 0.7 with three seeds averages over that edge: the same 100
# items as the spine's run (bench/runs/arithmetic-smollm2-135m-t2), 2 turns, each model × seeds 1–3.
# Resumable: a finished run is not repeated. Then `node bench/sampled-table.mjs OUT_DIR` compares each model with its
# control, paired by item.
# Usage: bash bench/sampled.sh OUT_DIR NAME=MODEL...   (MODEL: a registered name or a .gguf file)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$1
shift
mkdir -p "$out"
items=$out/items.jsonl
[ -f "$items" ] || node --input-type=module -e '
  const { readLogIn } = await import("./dist/record/log.js");
  const { values } = await readLogIn("bench/runs/arithmetic-smollm2-135m-t2", "episodes", { noun: "episode" });
  process.stdout.write(values.map((e) => JSON.stringify(e.record)).join("\n") + "\n");' > "$items"
for spec in "$@"; do
  name=${spec%%=*}
  model=${spec#*=}
  for seed in 1 2 3; do
    run=$out/$name/seed-$seed
    [ -f "$run/summary.json" ] || node bin/reflect.js eval --task arithmetic --data "$items" --turns 2 --temperature 0.7 --seed "$seed" --model "$model" --out "$run" > /dev/null
  done
done
