import assert from "node:assert/strict";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import type { FeedbackMode } from "../loops/feedback.js";
import { reflectRetry } from "../loops/reflect-retry.js";
import type { ChatMessage, ToolCall } from "../models/language-model.js";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import type { Judgement, Task } from "../tasks/task.js";
import type { RolloutParams, RolloutSampler, SampledReply } from "./rollout-sampler.js";
import { reflectionConversation, trainRrr, type DumpedDatum } from "./rrr.js";
import type { TrainerBackend } from "./types.js";

const task = arithmeticTask();
const item = { id: "item-1", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
const toolCalls: ToolCall[] = [{ id: "call_0", name: "calculator", arguments: '{"expression":"6*7"}' }];
const firstText = "Let me compute it. <answer>41</answer>";
const reflectionText = "I misread the product; 6 * 7 is 42.";

/**
 * A sampler double that answers the first attempt with text and a tool call, every reflection with `reflectionText`
 * and every retry with the right answer, records the conversations it is asked, and returns its own (fake) token ids
 * so the learner re-renders nothing.
 */
function recordingSampler(): RolloutSampler & { asked: ChatMessage[][] } {
  const asked: ChatMessage[][] = [];
  const own = { prompt: [1, 2, 3], tokens: [4, 5, 6] };
  return {
    specificationVersion: "v1",
    kind: "engine",
    version: 0,
    logprobsAt: undefined,
    asked,
    async sync() {},
    async generate(conversations: readonly (readonly ChatMessage[])[], params: RolloutParams): Promise<SampledReply[][]> {
      return conversations.map((c) => {
        asked.push(c.map((m) => ({ ...m })));
        const last = c.at(-1)?.content ?? "";
        const reply: SampledReply =
          c.length === 1 ? { text: firstText, finishReason: "stop", toolCalls, ...own } : /Reflect on what went wrong/u.test(last) ? { text: reflectionText, finishReason: "stop", ...own } : { text: "<answer>42</answer>", finishReason: "stop", ...own };
        return Array.from({ length: params.n }, () => ({ ...reply }));
      });
    },
    async close() {},
  };
}

/** Only what a dry run (`dumpBatch`) of RRR asks of its learner when the sampler brings its own tokens: decoding. */
const decodingBackend = {
  async decode(sequences: readonly (readonly number[])[]) {
    return { texts: sequences.map((s) => s.join(" ")), pieces: sequences.map((s) => s.map(String)) };
  },
} as unknown as TrainerBackend;

/** The conversations RRR asks its sampler for on one failure: the reflection's, then the retry's. */
async function rrrConversations(feedback: FeedbackMode): Promise<{ reflection: ChatMessage[]; retry: ChatMessage[]; dumped: DumpedDatum[] }> {
  const out = await mkdtemp(path.join(tmpdir(), "rk-rrr-conversation-"));
  try {
    const sampler = recordingSampler();
    const dump = path.join(out, "batch.jsonl");
    await trainRrr(decodingBackend, {
      out,
      steps: 1,
      batchSize: 1,
      microBatch: 1,
      adam: { lr: 1e-4 },
      checkpointEvery: 1,
      seed: 5,
      maxLength: 512,
      config: {},
      fingerprint: {},
      task: task as unknown as Task<unknown, Judgement>,
      items: [item],
      group: 1,
      feedback,
      attempt: { maxTokens: 64, temperature: 0 },
      reflection: { maxTokens: 64, temperature: 0.7 },
      retry: { maxTokens: 64, temperature: 0 },
      klCoef: 0,
      clip: null,
      sampler,
      dumpBatch: dump,
    });
    const [first, reflection, retry, ...rest] = sampler.asked;
    assert.deepEqual(first, task.prompt(item.record), "the first attempt is asked on the task's prompt");
    assert.equal(rest.length, 0, "one first attempt, one reflection, one retry");
    const dumped = (await readFile(dump, "utf8")).trim().split("\n").map((l) => JSON.parse(l) as DumpedDatum);
    return { reflection: reflection as ChatMessage[], retry: retry as ChatMessage[], dumped };
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

/** What `reflect eval` (reflect-retry) shows the model: the recorded requests of a scripted model. */
async function evalConversations(feedback: FeedbackMode): Promise<{ reflection: ChatMessage[]; retry: ChatMessage[] }> {
  const model = scriptedModel([{ text: firstText, toolCalls }, reflectionText, "<answer>42</answer>"]);
  const episode = await reflectRetry({ model, task, item, turns: 2, feedback });
  assert.equal(episode.solvedAt, 2);
  assert.deepEqual(episode.attempts[0]?.call.toolCalls, toolCalls, "the first attempt called a tool");
  const [, reflection, retry] = model.calls;
  return { reflection: [...(reflection?.messages ?? [])], retry: [...(retry?.messages ?? [])] };
}

describe("RRR trains on the conversation reflect eval shows", () => {
  for (const feedback of ["binary", "detailed"] as const) {
    it(`after a failed first attempt with a tool call, ${feedback} feedback: reflection and retry conversations are byte-identical`, async () => {
      const shown = await evalConversations(feedback);
      const trained = await rrrConversations(feedback);
      assert.equal(JSON.stringify(trained.reflection), JSON.stringify(shown.reflection));
      assert.equal(JSON.stringify(trained.retry), JSON.stringify(shown.retry));
      // The attempt's tool call is in the assistant turn both see, written as the loop writes tool calls back.
      const attempt = shown.reflection[shown.reflection.length - 2];
      assert.deepEqual(attempt, { role: "assistant", content: `${firstText}\n<tool_call>{"name":"calculator","arguments":"{\\"expression\\":\\"6*7\\"}"}</tool_call>` });
      const request = shown.reflection.at(-1)?.content ?? "";
      if (feedback === "detailed") assert.match(request, /^Your answer is incorrect\. A checker reports: /u);
      else assert.match(request, /^Your answer is incorrect\.\n\nReflect on what went wrong/u);
      // The datum trained on is the reflection the sampler wrote after that conversation.
      assert.deepEqual(trained.dumped.map((d) => [d.id, d.reflection, d.reward]), [["item-1", reflectionText, 1]]);
    });
  }

  it("reflectionConversation keeps a first attempt's tool calls and reads like the loop's without them", () => {
    const prompt = task.prompt(item.record);
    const withCalls = reflectionConversation(prompt, { output: "", toolCalls, feedback: "" }, "binary");
    assert.equal(withCalls.at(-2)?.content, `<tool_call>{"name":"calculator","arguments":"{\\"expression\\":\\"6*7\\"}"}</tool_call>`);
    const plain = reflectionConversation(prompt, { output: "<answer>41</answer>", feedback: "41 is wrong" }, "detailed");
    assert.deepEqual(plain.slice(0, -1), [...prompt, { role: "assistant", content: "<answer>41</answer>" }]);
    assert.match(plain.at(-1)?.content ?? "", /A checker reports: 41 is wrong/u);
  });
});
