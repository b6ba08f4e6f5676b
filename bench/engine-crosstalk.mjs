// Checks whether node-llama-cpp keeps sequences apart when it decodes several together (dev/LOG.md, 2026-11-27). Four
// different prompts, greedy: decoded one at a time, then as four sequences on one context (LlamaChat, as
// src/models/embedded.ts uses it), without seeds and with a seed per request. Greedy outputs must not depend on either;
// on node-llama-cpp 3.21.1 the four-sequence runs continued some prompts with another prompt's tokens, intermittently
// (more often on a busy machine); 3.22.1 keeps them apart (0 of 4 differ, 3 runs of each). Exit 1 when any output
// differs. Rerun it after a node-llama-cpp upgrade.
// Usage: node bench/engine-crosstalk.mjs [MODEL.gguf]   (default: the registered smollm2-135m)
import { getLlama, LlamaChat } from "node-llama-cpp";

const { resolveRegisteredModel } = await import(new URL("../dist/models/resolve.js", import.meta.url).href);
const modelPath = process.argv[2] ?? (await resolveRegisteredModel("smollm2-135m"));
const prompts = ["Count from one to ten in words.", "List the letters of the alphabet from a to j.", "Name the days of the week.", "Write the word banana five times."];
const llama = await getLlama({ gpu: false, build: "never", logLevel: "error", progressLogs: false });
const model = await llama.loadModel({ modelPath });

async function run(sequences, seeded) {
  const context = await model.createContext({ contextSize: 512 * sequences, sequences, threads: 2, batchSize: 512 });
  const chats = Array.from({ length: sequences }, () => new LlamaChat({ contextSequence: context.getSequence(), autoDisposeSequence: false }));
  const ask = (chat, prompt, i) => chat.generateResponse([{ type: "user", text: prompt }, { type: "model", response: [] }], { maxTokens: 16, temperature: 0, ...(seeded ? { seed: 1000 + i } : {}) }).then((r) => r.response);
  const out = [];
  if (sequences === 1) for (const [i, p] of prompts.entries()) out.push(await ask(chats[0], p, i));
  else out.push(...(await Promise.all(prompts.map((p, i) => ask(chats[i], p, i)))));
  await context.dispose();
  return out;
}

const alone = await run(1, true);
let mixed = 0;
for (const seeded of [false, true]) {
  const together = await run(prompts.length, seeded);
  const differ = together.filter((t, i) => t !== alone[i]).length;
  mixed += differ;
  console.log(`${prompts.length} sequences, ${seeded ? "a seed per request" : "no seeds"}: ${differ} of ${prompts.length} greedy outputs differ from one sequence at a time`);
  for (const [i, t] of together.entries()) if (t !== alone[i]) console.log(`  ${JSON.stringify(prompts[i])}: ${JSON.stringify(alone[i])} alone, ${JSON.stringify(t)} together`);
}
await model.dispose();
process.exitCode = mixed > 0 ? 1 : 0;
