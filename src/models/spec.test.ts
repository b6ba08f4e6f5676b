import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { ModelNotFoundError, ReflectkitError, UsageError } from "../errors.js";
import { registeredModels } from "./registry.js";
import { parseModelSpec } from "./spec.js";

const dir = mkdtempSync(path.join(os.tmpdir(), "reflectkit-spec-"));
after(() => rmSync(dir, { recursive: true, force: true }));

function thrown(spec: string): Error {
  let caught: unknown;
  assert.throws(
    () => parseModelSpec(spec),
    (error: unknown) => {
      caught = error;
      return true;
    },
  );
  if (!ReflectkitError.isInstance(caught)) assert.fail(`expected a ReflectkitError, got ${String(caught)}`);
  return caught;
}

describe("parseModelSpec", () => {
  it("reads every registered name", () => {
    for (const model of registeredModels) assert.deepEqual(parseModelSpec(model.name), { kind: "registered", name: model.name });
    assert.deepEqual(parseModelSpec("  smollm2-135m \n"), { kind: "registered", name: "smollm2-135m" });
  });

  it("reads embedded:NAME, the id the gateway and reports print, as NAME (not as a provider)", () => {
    assert.deepEqual(parseModelSpec("embedded:smollm2-135m"), { kind: "registered", name: "smollm2-135m" });
    assert.throws(() => parseModelSpec("embedded:no-such-model"), /unknown model "no-such-model"/u);
  });

  it("reads an existing .gguf path, absolute or relative, as its absolute path", () => {
    const file = path.join(dir, "tiny.gguf");
    writeFileSync(file, "GGUF");
    assert.deepEqual(parseModelSpec(file), { kind: "gguf", path: file });
    const relative = path.relative(process.cwd(), file);
    assert.deepEqual(parseModelSpec(relative), { kind: "gguf", path: file });
  });

  it("a missing .gguf path is ModelNotFoundError naming the resolved path", () => {
    const error = thrown("./no-such-dir-reflectkit/missing.gguf");
    assert.ok(error instanceof ModelNotFoundError);
    assert.ok(error.message.includes(path.resolve("no-such-dir-reflectkit/missing.gguf")), error.message);
    assert.match(error.message, /reflect models list/);

    const bare = thrown("missing-model.gguf");
    assert.ok(bare instanceof ModelNotFoundError);
    assert.ok(bare.message.includes(path.resolve("missing-model.gguf")), bare.message);
  });

  it("a missing path without the .gguf suffix is still read as a path", () => {
    const error = thrown(path.join(dir, "models", "nothing-here"));
    assert.ok(error instanceof ModelNotFoundError);
    assert.ok(error.message.includes(path.join(dir, "models", "nothing-here")), error.message);
  });

  it("reads an endpoint and a model joined by #", () => {
    assert.deepEqual(parseModelSpec("http://127.0.0.1:8000/v1#org/model-name"), {
      kind: "http",
      baseUrl: "http://127.0.0.1:8000/v1",
      model: "org/model-name",
    });
    assert.deepEqual(parseModelSpec("HTTPS://api.example.com/v1#gpt-x"), { kind: "http", baseUrl: "HTTPS://api.example.com/v1", model: "gpt-x" });
    assert.deepEqual(parseModelSpec("http://localhost:8000/v1#Qwen%2FQwen2.5-0.5B"), {
      kind: "http",
      baseUrl: "http://localhost:8000/v1",
      model: "Qwen/Qwen2.5-0.5B",
    });
  });

  it("an endpoint without #model is a UsageError that shows the syntax", () => {
    for (const spec of ["http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1#"]) {
      const error = thrown(spec);
      assert.ok(error instanceof UsageError, spec);
      assert.match(error.message, /names no model/);
      assert.match(error.message, /#my-model/);
    }
  });

  it("an empty spec is a UsageError", () => {
    for (const spec of ["", "   "]) {
      const error = thrown(spec);
      assert.ok(error instanceof UsageError);
      assert.match(error.message, /empty model spec/);
    }
  });

  it("an unknown bare word is a UsageError pointing at `reflect models list`", () => {
    const error = thrown("nope");
    assert.ok(error instanceof UsageError);
    assert.match(error.message, /unknown model "nope"/);
    assert.match(error.message, /reflect models list/);
  });
});
