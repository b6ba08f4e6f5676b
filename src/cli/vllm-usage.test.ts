import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { assertExit, cli, removeCacheDir } from "./cli-harness.js";

after(removeCacheDir);

describe("reflect vllm: bad input before any Python runs", () => {
  it("names the missing model file, the folder that is not a model, and the unknown spec", async () => {
    const missing = await cli(["vllm", "convert", "/no/such/model.gguf", "--out", "unused"]);
    assertExit(missing, 2);
    assert.match(missing.stderr, /no model at \/no\/such\/model\.gguf/u);
    const folder = await cli(["vllm", "serve", "src"]);
    assertExit(folder, 2);
    assert.match(folder.stderr, /src is a folder without config\.json/u);
    const unknown = await cli(["vllm", "serve", "no-such-model"]);
    assertExit(unknown, 2);
    assert.match(unknown.stderr, /cannot serve "no-such-model" with vLLM: pass a registered name/u);
    const dtype = await cli(["vllm", "serve", "smollm2-135m", "--dtype", "float16"]);
    assertExit(dtype, 2);
    assert.match(dtype.stderr, /expected one of bfloat16, float32, got "float16"/u);
  });
});
