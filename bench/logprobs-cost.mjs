// What asking the embedded model for per-token log-probs costs: the same greedy generations on SmolLM2-135M with and
// without `logprobs: true`, on one loaded model, in ABBA blocks (without, with, with, without) so drift hits both.
//
// Usage (after npm run build; wrap in the heavy-work lock on a shared machine):
//   node bench/logprobs-cost.mjs [--items 8] [--rounds 2] [--max-tokens 64]
//
// - Prompts: the arithmetic task's, seeded items (seed 1); greedy, so both sides generate the same tokens (checked).
// - Figures per side: wall ms and CPU ms (user + system of this process, which holds llama.cpp's threads) per
//   generated token; CPU time is the steadier one on a machine other work shares. Ratio = with / without.
import { performance } from "node:perf_hooks";
import { loadEmbeddedModel } from "../dist/models/embedded.js";
import { resolveRegisteredModel } from "../dist/models/resolve.js";
import { arithmeticTask, generateArithmetic } from "../dist/tasks/arithmetic/index.js";

const arg = (name, fallback) => {
  const at = process.argv.indexOf(`--${name}`);
  return at === -1 ? fallback : Number(process.argv[at + 1]);
};
const items = arg("items", 8);
const rounds = arg("rounds", 2);
const maxTokens = arg("max-tokens", 64);

const model = await loadEmbeddedModel({ modelPath: await resolveRegisteredModel("smollm2-135m"), threads: 2, contextSize: 1024 });
const task = arithmeticTask();
const prompts = generateArithmetic({ seed: 1, count: items }).map((item) => task.prompt(item.record));
const totals = { false: { wall: 0, cpu: 0, tokens: 0 }, true: { wall: 0, cpu: 0, tokens: 0 } };
const texts = new Map();

async function block(logprobs) {
  for (const [i, messages] of prompts.entries()) {
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const result = await model.doGenerate({ messages, maxTokens, temperature: 0, ...(logprobs ? { logprobs: true } : {}) });
    const wall = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const side = totals[String(logprobs)];
    side.wall += wall;
    side.cpu += (cpu.user + cpu.system) / 1000;
    side.tokens += result.usage.completionTokens;
    if (texts.has(i) && texts.get(i) !== result.text) throw new Error(`item ${i}: the text differs with logprobs=${logprobs}`);
    texts.set(i, result.text);
    if (logprobs && result.logprobs?.map((t) => t.text).join("") !== result.text) throw new Error(`item ${i}: log-probs do not spell the text`);
  }
}

await block(false); // warm-up, not counted
for (const side of Object.values(totals)) Object.assign(side, { wall: 0, cpu: 0, tokens: 0 });
for (let r = 0; r < rounds; r++) for (const logprobs of [false, true, true, false]) await block(logprobs);
await model.close();

const per = (side, key) => side[key] / side.tokens;
console.log(`| side | tokens | wall ms/token | CPU ms/token |\n|---|---|---|---|`);
for (const [name, side] of [["without log-probs", totals.false], ["with log-probs", totals.true]]) {
  console.log(`| ${name} | ${side.tokens} | ${per(side, "wall").toFixed(2)} | ${per(side, "cpu").toFixed(2)} |`);
}
console.log(`\nratio with/without: wall ${(per(totals.true, "wall") / per(totals.false, "wall")).toFixed(3)}, CPU ${(per(totals.true, "cpu") / per(totals.false, "cpu")).toFixed(3)} (${items} items × ${rounds * 2} blocks per side, ${maxTokens} max tokens)`);
