#!/usr/bin/env bash
# Does a GGUF LoRA adapter on the unchanged Q4_1 base keep what training changed, where merging it
# back into Q4_1 loses it? SmolLM2-135M-Instruct gets a short, deliberately strong LoRA SFT run (4 steps at lr 2e-3 on
# the data pipeline's D+, bench/data.sh) so the update is visibly non-zero; the run is then exported three ways and each
# file's next-token log-probs under node-llama-cpp are compared with the PyTorch model with the adapter (f32) on the
# run's own conversations (`reflect train export` does the check and writes FILE.json):
#   (a) the Q4_1 base + the adapter (--lora), (b) the f16 merge, (c) the Q4_1 merge (--dtype base).
# Resumable: each stage is skipped when its output exists. Usage: bash bench/lora-export.sh [OUT_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench/runs/lora-export}
data=bench/runs/data/arithmetic-200-export/d_plus.trl-sft.jsonl
mkdir -p "$out"
[ -f "$out/train-result.json" ] || node bin/reflect.js train sft --data "$data" --steps 4 --batch-size 8 --lr 2e-3 --checkpoint-every 4 --out "$out/train" --json > "$out/train-result.json"
[ -f "$out/adapter.gguf.json" ] || node bin/reflect.js train export --run "$out/train" --lora --dtype f16 --out "$out/adapter.gguf" > /dev/null
[ -f "$out/merged-f16.gguf.json" ] || node bin/reflect.js train export --run "$out/train" --dtype f16 --out "$out/merged-f16.gguf" > /dev/null
[ -f "$out/merged-q4_1.gguf.json" ] || node bin/reflect.js train export --run "$out/train" --dtype base --out "$out/merged-q4_1.gguf" > /dev/null
node --input-type=module -e '
import { readFileSync, statSync } from "node:fs";
const out = process.argv[1];
const rows = [["(a) Q4_1 base + LoRA", "adapter.gguf"], ["(b) f16 merge", "merged-f16.gguf"], ["(c) Q4_1 merge", "merged-q4_1.gguf"]];
const first = JSON.parse(readFileSync(`${out}/adapter.gguf.json`, "utf8")).check;
console.log(`tokens compared: ${first.tokens}; Q4_1 base alone vs trained: ${first.baseMeanAbs.toFixed(4)}; floor (Q4_1 base vs untrained PyTorch): ${first.floorMeanAbs.toFixed(4)}`);
console.log("| file | mean abs Δ log p vs PyTorch f32 + adapter | max | size (MB) |");
console.log("|---|---|---|---|");
for (const [label, file] of rows) {
  const check = JSON.parse(readFileSync(`${out}/${file}.json`, "utf8")).check;
  let mb = "(file not kept)";
  try { mb = (statSync(`${out}/${file}`).size / 1e6).toFixed(1); } catch {}
  console.log(`| ${label} | ${check.exportedMeanAbs.toFixed(4)} | ${check.exportedMaxAbs.toFixed(3)} | ${mb} |`);
}
' "$out"
