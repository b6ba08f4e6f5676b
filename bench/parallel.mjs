// Decode throughput of the embedded model by parallel sequences and CPU threads, side by side in one process.
// Usage: node bench/parallel.mjs [model-name] [requests]   (after npm ci; the model is fetched if not cached)
import os from "node:os";
import { loadEmbeddedModel, resolveRegisteredModel } from "../dist/index.js";

const name = process.argv[2] ?? "smollm2-135m";
const requests = Number(process.argv[3] ?? 8);
const modelPath = await resolveRegisteredModel(name);
const prompt = (i) => [{ role: "user", content: `Count from ${i} to ${i + 200}, one number per line.` }];
const rows = [];
for (const threads of [1, 2]) {
  for (const sequences of [1, 2, 4]) {
    const model = await loadEmbeddedModel({ modelPath, sequences, threads, contextSize: 1024 });
    await model.doGenerate({ messages: prompt(0), maxTokens: 8, temperature: 0 }); // warm-up
    const started = performance.now();
    const results = await Promise.all(Array.from({ length: requests }, (_, i) => model.doGenerate({ messages: prompt(i + 1), maxTokens: 128, temperature: 0, sessionKey: `r${i}` })));
    const seconds = (performance.now() - started) / 1000;
    const tokens = results.reduce((n, r) => n + r.usage.completionTokens, 0);
    rows.push({ threads, sequences, requests, tokens, seconds, tokensPerSecond: tokens / seconds });
    await model.close();
  }
}
console.log(`model ${name}, ${os.cpus().length} cores (${os.cpus()[0]?.model ?? "?"}), ${requests} requests of up to 128 tokens\n`);
console.log("| threads | parallel sequences | completion tokens | wall s | tokens/s |");
console.log("|---|---|---|---|---|");
for (const r of rows) console.log(`| ${r.threads} | ${r.sequences} | ${r.tokens} | ${r.seconds.toFixed(1)} | ${r.tokensPerSecond.toFixed(1)} |`);
