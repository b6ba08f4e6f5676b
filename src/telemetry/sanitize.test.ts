import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { isSecretKey, redactSecrets, sanitizeAttributes } from "./sanitize.js";

describe("isSecretKey", () => {
  it("drops credential names but keeps token counts", () => {
    for (const key of ["api_key", "apiKey", "x-api-key", "Authorization", "access_token", "refresh_token", "client_secret", "PASSWORD"]) assert.ok(isSecretKey(key, "v"), key);
    assert.ok(!isSecretKey("gen_ai.usage.input_tokens", 12));
    assert.ok(!isSecretKey("gen_ai.request.max_tokens", 256));
    assert.ok(!isSecretKey("reflect.tokens_G", [1, 2]));
    assert.ok(isSecretKey("gen_ai.usage.input_tokens", "12"), "a string under a count name is not a count");
    assert.ok(isSecretKey("access_token", 12), "a singular token is a credential even when numeric");
    assert.ok(isSecretKey("api_key_tokens", 1), "the key still names a credential without the plural");
    assert.ok(!isSecretKey("gen_ai.request.model", "gpt"));
  });
});

describe("redactSecrets", () => {
  it("redacts bearer tokens and sk- keys, and leaves ordinary text", () => {
    assert.equal(redactSecrets("Authorization: Bearer abc.DEF-123_=="), "Authorization: Bearer [REDACTED]");
    assert.equal(redactSecrets("bearer xyz"), "Bearer [REDACTED]");
    assert.equal(redactSecrets("key sk-proj-AbC_12-345678 end"), "key [REDACTED] end");
    assert.equal(redactSecrets("the sk-ill of a task-skipping bearer"), "the sk-ill of a task-skipping bearer");
  });
});

describe("sanitizeAttributes", () => {
  it("drops undefined values and content unless asked, and copies arrays", () => {
    const models = ["a", "b"];
    const clean = sanitizeAttributes({ "gen_ai.request.model": "m", "reflect.models": models, missing: undefined, "gen_ai.input.messages": "[]" }, { recordContent: false });
    assert.deepEqual(clean, { "gen_ai.request.model": "m", "reflect.models": ["a", "b"] });
    assert.notEqual(clean["reflect.models"], models);
    assert.deepEqual(sanitizeAttributes({ "gen_ai.input.messages": "[]" }, { recordContent: true }), { "gen_ai.input.messages": "[]" });
  });
});
