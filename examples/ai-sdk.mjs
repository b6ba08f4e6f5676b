// reflectkit and the Vercel AI SDK, both ways, on the embedded SmolLM2-135M (no server, no network).
//
//   npm run build && node examples/ai-sdk.mjs
//
// Part 1: `generateObject` from `ai` on the embedded model (`toAISDK`), wrapped in `reflectionMiddleware`: the reply
//   must fit the call's JSON schema (checked by the middleware, enforced by a grammar on the embedded model) and pass
//   a caller's check (the answer is 42). A failing draft is reflected on and retried; the episode comes back in
//   `providerMetadata.reflectkit`.
// Part 2: reflectkit's `reflectRetry` on an AI SDK model via `fromAISDK`. The AI SDK model here is the embedded
//   SmolLM2 exposed by `toAISDK` and taken back by `fromAISDK` — a real model, so the example runs offline; put any
//   AI SDK provider's model there instead (e.g. `createOpenAICompatible(...)("model")` from @ai-sdk/openai-compatible).
//
// Inside this repository, `reflectkit` and `reflectkit/ai-sdk` resolve to the built `dist/` through the package's own
// `exports` (a package can import itself by name); in an application they resolve to the installed package.
import { generateObject, jsonSchema, wrapLanguageModel } from "ai";
import { arithmeticTask, generateArithmetic, openModel, reflectRetry } from "reflectkit";
import { fromAISDK, reflectionMiddleware, toAISDK } from "reflectkit/ai-sdk";

globalThis.AI_SDK_LOG_WARNINGS = false;
const short = (text) => JSON.stringify(text.length > 160 ? `${text.slice(0, 160)}…` : text);

const embedded = await openModel("smollm2-135m", { threads: 2, contextSize: 2048 });
try {
  // ---- Part 1: reflection on an existing AI SDK call ----
  const model = wrapLanguageModel({
    model: toAISDK(embedded),
    middleware: reflectionMiddleware({
      maxTurns: 2,
      // Runs after the schema check passed, so the reply parses.
      checks: [
        (output) => {
          const { answer } = JSON.parse(output);
          const pass = answer === 42;
          return { source: "custom", pass, score: pass ? 1 : 0, feedback: pass ? "correct" : `${answer} is not 6 * 7` };
        },
      ],
    }),
  });
  const { object, usage, providerMetadata } = await generateObject({
    model,
    schema: jsonSchema({ type: "object", properties: { answer: { type: "integer" } }, required: ["answer"], additionalProperties: false }),
    prompt: "What is 6 * 7? Reply as JSON.",
    maxOutputTokens: 24,
    temperature: 0,
  });
  const episode = providerMetadata.reflectkit;
  console.log("part 1: generateObject through reflectionMiddleware");
  console.log(`  object ${JSON.stringify(object)}; selected attempt ${episode.selected} of ${episode.attempts.length}; stopped by ${episode.stoppedBy}`);
  for (const a of episode.attempts) {
    console.log(`  attempt ${a.turn}: ${short(a.output)}`);
    for (const c of a.checks) console.log(`    check ${c.source}: ${c.pass ? "pass" : "fail"} — ${c.feedback}`);
    if (a.reflection !== undefined) console.log(`    reflection: ${short(a.reflection)}`);
  }
  console.log(`  usage (every call of the episode): ${usage.inputTokens} in, ${usage.outputTokens} out, ${episode.usage.calls} calls`);

  // ---- Part 2: a reflectkit strategy on an AI SDK model ----
  const aiSdkModel = toAISDK(embedded, { provider: "embedded" }); // any AI SDK LanguageModelV4 (or V3) goes here
  const task = arithmeticTask();
  // seed 6 gives 10 - 7, which SmolLM2 gets wrong at its first, greedy, try — so the reflection shows
  const [item] = generateArithmetic({ seed: 6, count: 1 });
  const run = await reflectRetry({ model: fromAISDK(aiSdkModel), task, item, turns: 2, seed: 1, attempt: { maxTokens: 48 }, reflection: { maxTokens: 48 } });
  console.log(`part 2: reflectRetry on fromAISDK(${aiSdkModel.provider}#${aiSdkModel.modelId}), ${task.name} item ${item.id}`);
  for (const a of run.attempts) {
    console.log(`  attempt ${a.turn}: ${short(a.call.output)} — ${a.verdict.correct ? "correct" : "wrong"} (${a.verdict.feedback})`);
    if (a.reflection !== undefined) console.log(`    reflection: ${short(a.reflection.call.output)}`);
  }
  console.log(`  correct ${run.correct}; solved at ${run.solvedAt ?? "—"}; stopped by ${run.stoppedBy}; ${run.usage.calls} calls`);
} finally {
  await embedded.close();
}
