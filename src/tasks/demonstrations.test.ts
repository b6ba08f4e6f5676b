import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { arithmeticTask, generateArithmetic, type ArithmeticRecord } from "./arithmetic/index.js";
import { countdownTask, generateCountdown, type CountdownRecord } from "./countdown/index.js";
import { pickDemonstrations, withDemonstrations } from "./demonstrations.js";
import { findTaskFamily, taskFamilies } from "./registry.js";

const arithmetic = arithmeticTask();
const shots = [
  { record: { a: 2, b: 3, op: "+" } as ArithmeticRecord, reply: "2 + 3 = 5. <answer>5</answer>" },
  { record: { a: 12, b: 4, op: "-" } as ArithmeticRecord, reply: "12 - 4 = 8. <answer>8</answer>" },
];

describe("few-shot demonstrations", () => {
  it("come before the item's prompt as user/assistant turns; the question stays the last user message", () => {
    const task = withDemonstrations(arithmetic, shots);
    const record: ArithmeticRecord = { a: 6, b: 7, op: "*" };
    const messages = task.prompt(record);
    assert.deepEqual(messages, [
      ...arithmetic.prompt(shots[0]!.record),
      { role: "assistant", content: shots[0]!.reply },
      ...arithmetic.prompt(shots[1]!.record),
      { role: "assistant", content: shots[1]!.reply },
      ...arithmetic.prompt(record),
    ]);
    assert.equal(task.name, "arithmetic");
    assert.equal(task.verify(record, "<answer>42</answer>").correct, true);
    assert.deepEqual(task.parseRecord({ a: 1, b: 2, op: "+" }), { a: 1, b: 2, op: "+" });
    assert.equal(withDemonstrations(arithmetic, []), arithmetic, "no shots: the task itself");
    // The answer span is the task's own (answer confidence needs it; few-shot runs once had none).
    const reply = "2 + 3 = 5. <answer>5</answer>";
    assert.deepEqual(task.locateAnswer?.({ a: 2, b: 3, op: "+" }, reply), { start: 19, end: 20 });
    assert.deepEqual(task.locateAnswer?.({ a: 2, b: 3, op: "+" }, reply), arithmetic.locateAnswer?.({ a: 2, b: 3, op: "+" }, reply));
  });

  it("never repeat an item of the run, and say so when too few are left", () => {
    const candidates = shots.concat([{ record: { a: 2, b: 3, op: "*" }, reply: "<answer>6</answer>" }]);
    const key = (r: ArithmeticRecord) => `${r.a}${r.op}${r.b}`;
    assert.deepEqual(pickDemonstrations(candidates, 2, [{ a: 2, b: 3, op: "+" }], key).map((d) => key(d.record)), ["12-4", "2*3"]);
    assert.throws(() => pickDemonstrations(candidates, 3, [{ a: 2, b: 3, op: "+" }], key), /only 2 demonstrations differ from the run's items; asked for 3/);
  });

  it("arithmetic: solved by the task's own verifier, seeded apart from --seed, none equal to a run item", () => {
    const family = findTaskFamily("arithmetic");
    const items = generateArithmetic({ seed: 0, count: 100 }).map((i) => i.record);
    const demos = family.demonstrations!(8, items) as { record: ArithmeticRecord; reply: string }[];
    assert.equal(demos.length, 8);
    assert.deepEqual(family.demonstrations!(8, items), demos, "deterministic");
    const keys = new Set(items.map((r) => `${r.a}${r.op}${r.b}`));
    for (const d of demos) {
      assert.equal(arithmetic.verify(d.record, d.reply).correct, true, d.reply);
      assert.ok(!keys.has(`${d.record.a}${d.record.op}${d.record.b}`));
    }
    assert.equal(new Set(demos.map((d) => `${d.record.a}${d.record.op}${d.record.b}`)).size, 8, "no demonstration twice");
  });

  it("countdown: the solver's equation in the prompt's <think>/<answer> format passes the strict verifier", () => {
    const family = findTaskFamily("countdown");
    const items = generateCountdown({ seed: 0, count: 50 }).map((i) => i.record);
    const demos = family.demonstrations!(4, items) as { record: CountdownRecord; reply: string }[];
    assert.equal(demos.length, 4);
    for (const d of demos) {
      assert.equal(countdownTask({ mode: "strict" }).verify(d.record, d.reply).correct, true, d.reply);
      assert.match(d.reply, /^<think> .+ = \d+ <\/think>\n<answer> .+ <\/answer>$/);
    }
    // Avoiding one of them yields another set without it.
    const first = demos[0]!.record;
    assert.ok(!family.demonstrations!(4, [...items, first]).some((d) => JSON.stringify(d.record) === JSON.stringify(first)));
  });

  it("exist only for families that generate their own solved items", () => {
    assert.deepEqual(taskFamilies.filter((f) => f.demonstrations !== undefined).map((f) => f.name), ["countdown", "arithmetic"]);
  });
});
