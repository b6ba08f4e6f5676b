import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { getLlama, resolveChatWrapper, type ChatHistoryItem } from "node-llama-cpp";
import { resolveRegisteredModel } from "../models/resolve.js";
import { inferenceChatTemplate } from "./chat-template.js";
import type { WorkerClient } from "./worker-client.js";
import { prepareTestWorker, startTestWorker } from "./worker-harness.js";

// Builds the worker's venv if absent: at module level, outside every test timeout (minutes on a cold machine).
// Built (or found) before the first test, not on import: outside every test's timeout, and only when this file runs.
before(() => prepareTestWorker());

// The worker renders training conversations token for token as node-llama-cpp renders them at inference, for both
// registered models: what RRR and SFT train on is what `reflect eval` later shows the model.

const conversations = [
  [{ role: "user", content: "What is 2 + 3? Give the final answer inside <answer></answer> tags." }],
  [
    { role: "user", content: "What is 9 * 4?" },
    { role: "assistant", content: "9 * 4 = 24\n\n<answer>24</answer>" },
    { role: "user", content: "Your answer is incorrect.\n\nReflect on what went wrong." },
    { role: "assistant", content: "I multiplied wrongly." },
    { role: "user", content: "Now try again, using your reflection." },
  ],
  [
    { role: "system", content: "Be brief." },
    { role: "user", content: "Hi" },
  ],
];

function history(messages: readonly { role: string; content: string }[]): ChatHistoryItem[] {
  return [
    ...messages.map((m): ChatHistoryItem => (m.role === "system" ? { type: "system", text: m.content } : m.role === "user" ? { type: "user", text: m.content } : { type: "model", response: [m.content] })),
    { type: "model", response: [] },
  ];
}

describe("training prompts match inference prompts", { timeout: 600_000 }, () => {
  let worker: WorkerClient;
  before(async () => {
    worker = await startTestWorker();
  });
  after(async () => {
    await worker?.close();
  });

  for (const name of ["smollm2-135m", "gemma-3-270m"]) {
    test(name, async () => {
      const gguf = await resolveRegisteredModel(name);
      const { wrapper, template } = await inferenceChatTemplate(gguf);
      assert.ok(template !== undefined, `a template for node-llama-cpp's ${wrapper} wrapper`);
      await worker.load({ source: { kind: "tiny", tokenizer: gguf }, lora: null, chatTemplate: template });
      const rendered = await worker.renderChat(conversations, true);
      const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
      const model = await llama.loadModel({ modelPath: gguf, vocabOnly: true });
      try {
        const chatWrapper = resolveChatWrapper(model);
        conversations.forEach((messages, i) => {
          const expected = chatWrapper.generateContextState({ chatHistory: history(messages) }).contextText.tokenize(model.tokenizer);
          assert.deepEqual(rendered[i]?.tokens, [...expected], `conversation ${i}: ${JSON.stringify(rendered[i]?.text)}`);
          for (const [m, span] of (rendered[i]?.spans ?? []).entries()) if (messages[m]?.role !== "system") assert.ok(span.exact, `message ${m} of conversation ${i} tokenizes apart from its frame`);
        });
      } finally {
        await model.dispose();
      }
    });
  }
});
