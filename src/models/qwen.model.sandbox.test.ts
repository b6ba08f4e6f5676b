/**
 * The Qwen2.5-Coder Instruct models through every door: opened by name, `reflect eval` on MBPP from the command line,
 * a `reflect serve` gateway talked to by the official `openai` client, and the AI SDK middleware under the real `ai`
 * package. Each reply is checked for what a wrong chat template or a missing stop token shows: ChatML's markers in the
 * text, a second turn written after the answer, or a reply that runs to its token limit on a short question.
 *
 * node-llama-cpp reads the GGUF's Jinja template and, finding it equivalent to its built-in Qwen wrapper (ChatML),
 * prompts with that wrapper; generation ends at any end-of-generation token of the vocabulary, which for these files
 * is `<|im_end|>` (151645, also the EOS) and `<|endoftext|>` (151643). The first tests pin both. One difference from
 * the file's own template: given a conversation without a system message, the template adds Qwen's default one ("You
 * are Qwen, created by Alibaba Cloud. …") and the wrapper adds none (node-llama-cpp compares the two only on
 * conversations that have one). So such a request is prompted with its user turn alone, as the token count pins.
 *
 * `.sandbox`: the MBPP run verifies its attempts in bubblewrap. Token limits are small so the file stays a few
 * minutes on two cores; one model is loaded at a time (the command-line runs are child processes of their own).
 */
import assert from "node:assert/strict";
import { readFileSync, existsSync } from "node:fs";
import path from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import { generateText, wrapLanguageModel } from "ai";
import { getLlama, resolveChatWrapper, SpecialTokensText } from "node-llama-cpp";
import OpenAI from "openai";
import { reflectionMiddleware } from "../ai-sdk/reflection-middleware.js";
import { toAISDK } from "../ai-sdk/to-ai-sdk.js";
import { assertExit, cli, gatewayUrlOf, jsonLines, startCli, tempDir } from "../cli/cli-harness.js";
import type { Check } from "../core/types.js";
import type { Episode } from "../loops/types.js";
import type { GenerateResult, LanguageModel } from "./language-model.js";
import { openModel } from "./open.js";
import { resolveRegisteredModel } from "./resolve.js";

(globalThis as { AI_SDK_LOG_WARNINGS?: boolean }).AI_SDK_LOG_WARNINGS = false;

const SMALL = "qwen2.5-coder-0.5b";
const LARGE = "qwen2.5-coder-1.5b";
const QUESTION = "Write a Python function is_even(n) that returns True when n is even. Reply with only the code, in one ```python block.";
/** Room for the function and a sentence after it: a reply that stops by itself on this question ends well before. */
const MAX_TOKENS = 96;
const IM_END = 151645;
const END_OF_TEXT = 151643;

/** What a wrong template or a missing stop token leaves in a reply: a ChatML marker, or a role line opening another turn. */
function assertOneCleanTurn(text: string, where: string): void {
  for (const marker of ["<|im_end|>", "<|im_start|>", "<|endoftext|>"]) assert.ok(!text.includes(marker), `${where}: ${marker} in the reply: ${JSON.stringify(text)}`);
  assert.doesNotMatch(text, /^(?:system|user|assistant)\s*$/mu, `${where}: a second turn in the reply: ${JSON.stringify(text)}`);
}

function assertPythonBlock(text: string, where: string): void {
  assert.match(text, /```python\s*\n[\s\S]*\bdef is_even\s*\([\s\S]*```/u, `${where}: no python block defining is_even: ${JSON.stringify(text)}`);
}

/** Opened by name: answers the coding question in a python block, by itself, with usage. */
async function assertAnswersByName(t: TestContext, model: LanguageModel, name: string): Promise<GenerateResult> {
  const started = Date.now();
  const result = await model.doGenerate({ messages: [{ role: "user", content: QUESTION }], maxTokens: MAX_TOKENS, temperature: 0 });
  t.diagnostic(`${name}: ${result.usage.completionTokens} tokens in ${Date.now() - started} ms, ${result.finishReason}: ${JSON.stringify(result.text)}`);
  assertOneCleanTurn(result.text, name);
  assertPythonBlock(result.text, name);
  assert.equal(result.finishReason, "stop", `${name} ran to its limit: ${JSON.stringify(result.text)}`);
  assert.ok(result.usage.promptTokens > 0, "prompt tokens reported");
  assert.ok(result.usage.completionTokens > 0 && result.usage.completionTokens < MAX_TOKENS, `${result.usage.completionTokens} completion tokens`);
  return result;
}

/** The cache folder the small model was resolved into (fetched there once), for the command-line runs, offline. */
let cache: string;
/** The question as a ChatML user turn and the opened assistant turn, in tokens (read from the file's vocabulary). */
let chatmlQuestionTokens: number;
before(async () => {
  cache = path.dirname(await resolveRegisteredModel(SMALL));
});

describe("the Qwen GGUFs' prompt and stop tokens (read from the files' vocabularies, no weights loaded)", { timeout: 600_000 }, () => {
  for (const name of [SMALL, LARGE]) it(`${name} prompts with ChatML and ends generation at <|im_end|> and <|endoftext|>`, async () => {
    const file = await resolveRegisteredModel(name);
    const llama = await getLlama({ gpu: false, build: "never", progressLogs: false, logLevel: "error" as never });
    const vocab = await llama.loadModel({ modelPath: file, vocabOnly: true });
    try {
      // The wrapper LlamaChat resolves for the file when none is given, as the embedded model's does.
      const wrapper = resolveChatWrapper(vocab);
      assert.equal(wrapper.wrapperName, "Qwen");
      const { contextText, stopGenerationTriggers } = wrapper.generateContextState({
        chatHistory: [{ type: "system", text: "Be brief." }, { type: "user", text: "Hi" }, { type: "model", response: ["Hello."] }, { type: "user", text: "Again" }, { type: "model", response: [] }],
      });
      assert.equal(contextText.toString(), "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nHello.<|im_end|>\n<|im_start|>user\nAgain<|im_end|>\n<|im_start|>assistant\n");
      if (name === SMALL) chatmlQuestionTokens = vocab.tokenize(`<|im_start|>user\n${QUESTION}<|im_end|>\n<|im_start|>assistant\n`, true).length;
      // The markers are single special tokens, not text spelled out of ordinary ones.
      assert.deepEqual(vocab.tokenize("<|im_end|><|endoftext|>", true), [IM_END, END_OF_TEXT]);
      assert.equal(vocab.tokens.eos, IM_END);
      for (const token of [IM_END, END_OF_TEXT]) assert.ok(vocab.isEogToken(token as never), `token ${token} ends generation`);
      assert.ok(!vocab.isEogToken(151644 as never), "<|im_start|> is no end of generation");
      const special = stopGenerationTriggers.flatMap((trigger) => trigger.values).filter((value) => value instanceof SpecialTokensText);
      assert.ok(special.some((value) => value.value === "<|im_end|>"), "the special token <|im_end|> is a stop trigger");
    } finally {
      await vocab.dispose();
    }
  });
});

describe(`reflect eval --task mbpp --model ${SMALL}`, { timeout: 900_000 }, () => {
  it("writes a run folder of 2 episodes whose attempts hold code", async (t) => {
    const dataDir = path.resolve(process.env.REFLECTKIT_DATA ?? "../shared/data");
    // What `--task mbpp` reads by default: ReflectEvo's MBPP test split.
    const file = path.join(dataDir, "reflectevo", "mbpp_test.jsonl");
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const out = path.join(await tempDir(t), "run");
    const result = await cli(["eval", "--task", "mbpp", "--model", SMALL, "--limit", "2", "--turns", "2", "--max-tokens", "128", "--reflection-max-tokens", "32", "--threads", "2", "--out", out, "--json"], {
      env: { REFLECTKIT_CACHE: cache, REFLECTKIT_DATA: dataDir },
      limitMs: 840_000,
    });
    assertExit(result, 0);
    const summary = JSON.parse(readFileSync(path.join(out, "summary.json"), "utf8")) as { n: number };
    assert.equal(summary.n, 2);
    assert.equal((JSON.parse(result.stdout) as { n: number }).n, 2);
    const episodes = jsonLines<Episode>(readFileSync(path.join(out, "episodes.jsonl"), "utf8"));
    assert.equal(episodes.length, 2);
    for (const episode of episodes) {
      const calls = episode.attempts.flatMap((a) => [a.call, ...(a.reflection?.call === undefined ? [] : [a.reflection.call])]);
      t.diagnostic(`${episode.id}: ${calls.map((c) => `${c.role} ${c.usage.completionTokens} tokens ${c.finishReason} ${c.ms} ms`).join("; ")}; correct ${episode.attempts.map((a) => a.verdict.correct).join(", ")}`);
      assert.equal(episode.model, `embedded:${SMALL}`);
      assert.ok(episode.attempts.length >= 1);
      for (const attempt of episode.attempts) {
        assertOneCleanTurn(attempt.call.output, `${episode.id} attempt ${attempt.turn}`);
        assert.match(attempt.call.output, /\bdef \w+\s*\(/u, `${episode.id} attempt ${attempt.turn} holds no function: ${JSON.stringify(attempt.call.output)}`);
        assert.equal(typeof attempt.verdict.correct, "boolean", "the sandbox judged the attempt");
      }
    }
  });
});

describe(`reflect serve --upstream ${SMALL}`, { timeout: 600_000 }, () => {
  it("answers the official openai client, JSON and streamed, with no template tokens", async (t) => {
    const run = await startCli(["serve", "--upstream", SMALL, "--port", "0", "--offline"], { env: { REFLECTKIT_CACHE: cache }, limitMs: 540_000 });
    try {
      const openai = new OpenAI({ baseURL: await gatewayUrlOf(run), apiKey: "unused", maxRetries: 0, timeout: 300_000 });
      const ask = { model: SMALL, messages: [{ role: "user" as const, content: QUESTION }], max_tokens: MAX_TOKENS, temperature: 0 };
      const answer = await openai.chat.completions.create(ask);
      const text = answer.choices[0]?.message.content ?? "";
      t.diagnostic(`gateway: ${answer.usage?.completion_tokens} tokens, ${answer.choices[0]?.finish_reason}: ${JSON.stringify(text)}`);
      assertOneCleanTurn(text, "gateway JSON");
      assertPythonBlock(text, "gateway JSON");
      assert.equal(answer.choices[0]?.finish_reason, "stop");
      assert.ok(answer.usage !== undefined && answer.usage.completion_tokens > 0 && answer.usage.completion_tokens < MAX_TOKENS, JSON.stringify(answer.usage));

      const stream = await openai.chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
      let streamed = "";
      let finish: string | null = null;
      let completionTokens = 0;
      for await (const chunk of stream) {
        streamed += chunk.choices[0]?.delta.content ?? "";
        finish = chunk.choices[0]?.finish_reason ?? finish;
        completionTokens = chunk.usage?.completion_tokens ?? completionTokens;
      }
      assertOneCleanTurn(streamed, "gateway stream");
      assert.equal(finish, "stop");
      // Greedy, one sequence, no cached prefix across requests: the stream is the JSON answer again.
      assert.equal(streamed, text);
      assert.equal(completionTokens, answer.usage.completion_tokens);
    } finally {
      run.child.kill("SIGTERM");
      await run.done;
    }
  });
});

describe(`${SMALL} embedded, and the AI SDK middleware over it`, { timeout: 600_000 }, () => {
  let model: LanguageModel;
  before(async () => {
    model = await openModel(SMALL, { threads: 2, contextSize: 2048 });
  });
  after(() => model?.close());

  it("answers a short coding question in a python block, stops by itself, reports usage; its prompt is the ChatML turn alone", async (t) => {
    const result = await assertAnswersByName(t, model, SMALL);
    // The context the engine evaluated is the user turn and the opened assistant turn, nothing more (no default system
    // message); the engine's meter counts the prompt's last token as the first generated one's.
    const counted = await (model.countTokens as NonNullable<LanguageModel["countTokens"]>)({ messages: [{ role: "user", content: QUESTION }] });
    assert.equal(counted, chatmlQuestionTokens);
    assert.equal(result.usage.promptTokens + 1, counted);
  });

  it("answers through the real ai package's generateText, wrapped in reflectionMiddleware", async (t) => {
    let episode: Episode | undefined;
    const hasPython = (output: string): Check => {
      const pass = /```python[\s\S]*```/u.test(output);
      return { source: "custom", pass, score: pass ? 1 : 0, feedback: pass ? "a python block" : "Put the code in one ```python block." };
    };
    const wrapped = wrapLanguageModel({ model: toAISDK(model), middleware: reflectionMiddleware({ checks: [hasPython], maxTurns: 2, reflectionMaxTokens: 32, onEpisode: (e) => void (episode = e) }) });
    const result = await generateText({ model: wrapped, prompt: QUESTION, maxOutputTokens: MAX_TOKENS, temperature: 0 });
    t.diagnostic(`generateText: ${result.usage.outputTokens} tokens, ${result.finishReason}: ${JSON.stringify(result.text)}`);
    assertOneCleanTurn(result.text, "generateText");
    assertPythonBlock(result.text, "generateText");
    assert.equal(result.finishReason, "stop");
    assert.ok(episode !== undefined, "the middleware ran an episode");
    const calls = episode.attempts.flatMap((a) => [a.call, ...(a.reflection?.call === undefined ? [] : [a.reflection.call])]);
    for (const call of calls) assertOneCleanTurn(call.output, `${call.role} ${call.model}`);
    assert.equal(result.usage.outputTokens, calls.reduce((n, c) => n + c.usage.completionTokens, 0));
    assert.ok((result.usage.inputTokens ?? 0) > 0);
  });
});

describe(`${LARGE} embedded`, { timeout: 600_000 }, () => {
  let model: LanguageModel;
  before(async () => {
    model = await openModel(LARGE, { threads: 2, contextSize: 1024 });
  });
  after(() => model?.close());

  it("answers a short coding question in a python block, stops by itself, reports usage", async (t) => {
    await assertAnswersByName(t, model, LARGE);
  });
});
