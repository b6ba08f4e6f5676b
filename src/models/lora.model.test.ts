import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { InputError, ModelNotFoundError, UsageError } from "../errors.js";
import { checkLoraAdapter, loraIdSuffix } from "./lora.js";
import { openModel } from "./open.js";
import { resolveRegisteredModel } from "./resolve.js";

// Headers only: no model is loaded. The adapter files themselves are written and applied in
// src/train/lora-export.worker.model.test.ts (they need the training worker).

test("a missing adapter file says where it looked and how to make one", async () => {
  const base = await resolveRegisteredModel("smollm2-135m");
  await assert.rejects(checkLoraAdapter(base, { path: "no/such/adapter.gguf" }), (error: unknown) => {
    assert.ok(error instanceof ModelNotFoundError);
    assert.match(error.message, new RegExp(`no LoRA adapter at ${path.resolve("no/such/adapter.gguf").replace(/[/.]/g, "\\$&")} — .*reflect train export --run DIR --lora`));
    return true;
  });
});

test("a model file passed as an adapter is refused by its general.type", async () => {
  const base = await resolveRegisteredModel("smollm2-135m");
  await assert.rejects(checkLoraAdapter(base, { path: base }), (error: unknown) => {
    assert.ok(error instanceof InputError);
    assert.equal(error.path, base);
    assert.match(error.message, /not a GGUF LoRA adapter \(general\.type "model", adapter\.type undefined; want "adapter" and "lora"\)/);
    return true;
  });
});

test("an adapter cannot be put on an HTTP model", async () => {
  await assert.rejects(openModel("http://127.0.0.1:9/v1#m", { lora: { path: "a.gguf" } }), UsageError);
});

test("modelId names the adapter and a scale other than 1", () => {
  assert.equal(loraIdSuffix({ path: "/x/y/adapter.gguf" }), "+lora:adapter.gguf");
  assert.equal(loraIdSuffix({ path: "adapter.gguf", scale: 0.5 }), "+lora:adapter.gguf@0.5");
});
