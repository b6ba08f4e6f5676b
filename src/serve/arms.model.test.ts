import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { tempDir } from "../cli/cli-harness.js";
import { loadEmbeddedModel, type EmbeddedModel } from "../models/embedded.js";
import { writeLoraGguf } from "../models/lora-fixture.js";
import { resolveRegisteredModel } from "../models/resolve.js";
import { engineArms } from "./arms.js";
import { startTestGateway } from "./serve-harness.js";

let model: EmbeddedModel;
before(async () => {
  model = await loadEmbeddedModel({ modelPath: await resolveRegisteredModel("smollm2-135m", { offline: true }), name: "smollm2-135m", sequences: 2 });
});
after(() => model.close());

/** SmolLM2-135M's attention query and output projections are 576 × 576 in every block. */
const N_EMBD = 576;

async function ask(url: string, arm: "base" | "adapter"): Promise<{ text: string; arm: string | null }> {
  const response = await fetch(`${url}/v1/chat/completions`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ model: "smollm2-135m", messages: [{ role: "user", content: "Name a colour." }], max_tokens: 12, temperature: 0, reflect: { arm } }),
  });
  assert.equal(response.status, 200);
  const body = (await response.json()) as { choices: Array<{ message: { content: string } }> };
  return { text: body.choices[0]?.message.content ?? "", arm: response.headers.get("x-reflect-arm") };
}

describe("arms on the embedded engine", () => {
  it("serves base and adapter from one SmolLM2, and swaps a real GGUF LoRA through the admin route", async (t) => {
    const dir = await tempDir(t);
    // A strong rank-1 update on every block's attention output changes the greedy reply; a zero B changes nothing.
    const pairs = (scaleB: number) =>
      Array.from({ length: 30 }, (_, blk) => ({ base: `blk.${blk}.attn_output.weight`, nIn: N_EMBD, nOut: N_EMBD, rank: 1, a: (i: number) => ((i * 7919) % 13) / 13 - 0.5, b: (i: number) => scaleB * ((((i * 104729) % 17) / 17) - 0.5) }));
    const strong = path.join(dir, "strong.gguf");
    const zero = path.join(dir, "zero.gguf");
    await writeLoraGguf(strong, { architecture: "llama", alpha: 1, pairs: pairs(4) });
    await writeLoraGguf(zero, { architecture: "llama", alpha: 1, pairs: pairs(0) });
    const arms = engineArms(model, { canaryPercent: 50 });
    await arms.load({ path: strong });
    const adminKey = "admin-key-model-test-0001";
    const gateway = await startTestGateway(t, { upstream: arms.model("base")!, arms, adminKey, limits: { parallel: 2 } });

    const base = await ask(gateway.url, "base");
    const [adapted, baseAgain] = await Promise.all([ask(gateway.url, "adapter"), ask(gateway.url, "base")]);
    t.diagnostic(`base: ${JSON.stringify(base.text)} · strong adapter: ${JSON.stringify(adapted.text)}`);
    assert.equal(adapted.arm, "adapter");
    assert.notEqual(adapted.text, base.text, "the adapter changes the greedy reply");
    assert.equal(baseAgain.text, base.text, "the base arm is the base, whatever ran on the adapter between");

    const swap = await fetch(`${gateway.url}/admin/lora`, { method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${adminKey}` }, body: JSON.stringify({ path: zero }) });
    assert.equal(swap.status, 200);
    assert.equal(((await swap.json()) as { model: string }).model, "embedded:smollm2-135m+lora:zero.gguf");
    assert.equal((await ask(gateway.url, "adapter")).text, base.text, "a zero update is the base");
  });
});
