import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractJson, lastBalancedValue, lastJsonFence } from "./extract-json.js";

function text(output: string, options?: { expect?: "object" | "array" }) {
  const extracted = extractJson(output, options);
  return extracted.found ? [extracted.source, extracted.text.trim()] : [extracted.reason];
}

describe("extractJson", () => {
  it("prefers the last answer block, then the last ```json block, then prose", () => {
    const both = '```json\n{"a": 1}\n```\n<answer>{"a": 2}</answer> and <answer> {"a": 3} </answer>';
    assert.deepEqual(text(both), ["answer-block", '{"a": 3}']);
    assert.deepEqual(text('```json\n{"a": 1}\n```\ntext\n```JSON\n[2]\n```\n{"a": 4}'), ["fenced-block", "[2]"]);
    assert.deepEqual(text('I think {"a": 1} and then {"a": {"b": [2]}} is it.'), ["prose", '{"a": {"b": [2]}}']);
    assert.deepEqual(text("no json here"), ["no-json"]);
  });

  it("unwraps a fence inside the answer block and keeps any JSON value there", () => {
    assert.deepEqual(text('<answer>\n```json\n{"a": 1}\n```\n</answer>'), ["answer-block", '{"a": 1}']);
    assert.deepEqual(text("<answer>```\n[1]\n```</answer>"), ["answer-block", "[1]"]);
    assert.deepEqual(text('<answer>```json {"a": 1}```</answer>'), ["answer-block", '{"a": 1}']);
    assert.deepEqual(text('<ANSWER >"just a string"</answer >'), ["answer-block", '"just a string"']);
  });

  it("says so when the last answer block is never closed", () => {
    assert.deepEqual(text('<answer>{"a": 1}</answer> wait <answer>{"a": 2}'), ["unterminated-block"]);
  });

  it("runs an unclosed ```json block to the end, and skips other languages", () => {
    assert.equal(lastJsonFence('```json\n{"a": 1'), '{"a": 1');
    assert.equal(lastJsonFence('```python\nx = {"a": 1}\n```'), null);
    assert.equal(lastJsonFence('```\n{}\n```\n```json\n[1]\n```\n```js\n{}\n```'), "[1]\n");
    assert.equal(lastJsonFence('````json\n{"a": "```"}\n````'), '{"a": "');
  });

  it("finds the last balanced top-level value in prose, ignoring brackets in strings", () => {
    assert.equal(lastBalancedValue('Here: {"a": "}{", "b": ["]"]} done'), '{"a": "}{", "b": ["]"]}');
    assert.equal(lastBalancedValue('{"a": "say \\"}\\" please"}'), '{"a": "say \\"}\\" please"}');
    assert.equal(lastBalancedValue("It's {unbalanced and then [1, 2]"), "[1, 2]");
    assert.equal(lastBalancedValue("}}]] {[}] [3]"), "[3]");
    assert.equal(lastBalancedValue("none"), null);
  });

  it("prefers a well-formed candidate of the expected kind over later prose brackets", () => {
    const reply = 'The object is {"title": "x", "tags": ["a"]} as in {the spec} and source [1].';
    assert.equal(lastBalancedValue(reply, "object"), '{"title": "x", "tags": ["a"]}');
    assert.equal(lastBalancedValue(reply), "[1]");
    assert.equal(lastBalancedValue("{not json} {also not}"), "{also not}");
  });

  it("stays linear on hostile text", () => {
    const started = performance.now();
    for (const hostile of ["{".repeat(100_000), "[".repeat(100_000) + "]".repeat(100_000), '{"'.repeat(100_000), "```json\n".repeat(100_000), "```".repeat(100_000), "<answer>".repeat(100_000), "[1]".repeat(300_000), '{"a":"\\'.repeat(100_000), `{${" ".repeat(1_000_000)}`]) {
      extractJson(hostile);
      extractJson(hostile, { expect: "object" });
    }
    const elapsed = performance.now() - started;
    assert.ok(elapsed < 3000, `took ${elapsed.toFixed(0)} ms`);
  });
});
