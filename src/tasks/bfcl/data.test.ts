import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, it } from "node:test";
import { bfclFamily, bfclTask, loadBfcl, referenceCalls, type BfclRecord, type JsonCall } from "./index.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const bfclDir = join(dataDir, "bfcl");

/** The question files of the four categories in both versions, with their record counts (MANIFEST.md). */
const FILES: Array<[string, number]> = [
  ["v3/BFCL_v3_simple.json", 400],
  ["v3/BFCL_v3_multiple.json", 200],
  ["v3/BFCL_v3_parallel.json", 200],
  ["v3/BFCL_v3_parallel_multiple.json", 200],
  ["v4/BFCL_v4_simple_python.json", 400],
  ["v4/BFCL_v4_multiple.json", 200],
  ["v4/BFCL_v4_parallel.json", 200],
  ["v4/BFCL_v4_parallel_multiple.json", 200],
];

/**
 * Expected parameters that no call can give, since the function doc lacks them (BFCL's ground truth has two);
 * `referenceCalls` leaves them out. Any other would be a new data problem worth a look.
 */
const KNOWN_SKIPPED = new Set(["parallel_multiple_12:calculate_voltage_difference.permeability", "parallel_multiple_26:bank.calculate_balance.type"]);

/** A Python literal with single-quoted strings (the JSON form covers double quotes). */
function pyRepr(value: unknown): string {
  if (value === null) return "None";
  if (value === true) return "True";
  if (value === false) return "False";
  if (typeof value === "number") return String(value);
  if (typeof value === "string") {
    const escaped = value.replace(/[\\'\u0000-\u001f]/gu, (c) => (c === "\\" ? "\\\\" : c === "'" ? "\\'" : c === "\n" ? "\\n" : `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`));
    return `'${escaped}'`;
  }
  if (Array.isArray(value)) return `[${value.map(pyRepr).join(", ")}]`;
  return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${pyRepr(k)}: ${pyRepr(v)}`).join(", ")}}`;
}

const asJson = (calls: JsonCall[]) => `<answer>${JSON.stringify(calls)}</answer>`;
const asPython = (calls: JsonCall[]) => `<answer>[${calls.map((c) => `${c.name}(${Object.entries(c.arguments).map(([k, v]) => `${k}=${pyRepr(v)}`).join(", ")})`).join(", ")}]</answer>`;
const clone = (calls: JsonCall[]): JsonCall[] => JSON.parse(JSON.stringify(calls)) as JsonCall[];
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/gu, "\\$&");

/** A value of the same kind as `value` that the acceptable list surely lacks, or undefined. */
function wrongValue(value: unknown, acceptable: unknown[]): unknown {
  if (typeof value === "string") return "zzq not an allowed value";
  if (typeof value === "number") return Number.isInteger(value) ? 987654321 : 98765.4321;
  if (typeof value === "boolean" && !acceptable.includes(!value)) return !value;
  return undefined;
}

describe("BFCL on the real v3 and v4 data (shared data)", () => {
  for (const [name, count] of FILES) {
    const file = join(bfclDir, name);

    it(`${name}: ${count} records; the first acceptable values verify as JSON, as Python and with dots as underscores`, async (t) => {
      if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
      const items = await loadBfcl(file);
      assert.equal(items.length, count);
      assert.equal(new Set(items.map((item) => item.id)).size, count);
      const task = bfclTask();
      let verified = 0;
      for (const { id, record } of items) {
        const reference = referenceCalls(record);
        assert.ok(reference !== null, `${id}: an expected function is not offered`);
        for (const skipped of reference.skipped) assert.ok(KNOWN_SKIPPED.has(`${id}:${skipped}`), `${id}: expected parameter ${skipped} is not in the doc`);
        const underscored = reference.calls.map((call) => ({ ...call, name: call.name.replace(/\./gu, "_") }));
        for (const output of [asJson(reference.calls), asPython(reference.calls), asJson(underscored), asPython(underscored)]) {
          const verdict = task.verify(record, output);
          assert.equal(verdict.correct, true, `${id}: ${verdict.feedback}\n${output.slice(0, 500)}`);
          assert.equal(verdict.score, 1);
        }
        assert.equal(task.verify(record, asJson([...reference.calls].reverse())).correct, true, `${id}: call order must not matter`);
        verified++;
      }
      assert.equal(verified, count);
    });

    it(`${name}: corrupted calls fail with feedback naming the mismatch`, async (t) => {
      if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
      const task = bfclTask();
      const counts = { name: 0, value: 0, missing: 0, extra: 0, dropped: 0, otherFunction: 0 };
      for (const { id, record } of await loadBfcl(file)) {
        const gold = (referenceCalls(record) as { calls: JsonCall[] }).calls;
        const expectFail = (calls: JsonCall[], pattern: RegExp | string, what: string) => {
          const verdict = task.verify(record, asJson(calls));
          assert.equal(verdict.correct, false, `${id} (${what}) verified`);
          if (typeof pattern === "string") assert.ok(verdict.feedback.includes(pattern), `${id} (${what}): ${verdict.feedback}\n  wanted: ${pattern}`);
          else assert.match(verdict.feedback, pattern, `${id} (${what})`);
          return verdict;
        };

        const renamed = clone(gold);
        (renamed[0] as JsonCall).name = "no_such_function";
        expectFail(renamed, 'call 1 (no_such_function): function "no_such_function" does not exist', "wrong name");
        counts.name++;

        changed: for (const [c, call] of gold.entries()) {
          const acceptable = Object.values(record.ground_truth[c] as object)[0] as Record<string, unknown[]>;
          for (const [param, value] of Object.entries(call.arguments)) {
            const wrong = wrongValue(value, acceptable[param] ?? []);
            if (wrong === undefined) continue;
            const calls = clone(gold);
            (calls[c] as JsonCall).arguments[param] = wrong;
            const verdict = expectFail(calls, `call ${c + 1} (${call.name}): parameter "${param}" = ${typeof wrong === "boolean" ? (wrong ? "True" : "False") : JSON.stringify(wrong)} is not an allowed value`, `changed ${param}`);
            if (typeof value === "string" && value.length >= 3 && !JSON.stringify(calls).includes(JSON.stringify(value))) {
              assert.ok(!verdict.feedback.includes(JSON.stringify(value)), `${id}: feedback leaks ${value}: ${verdict.feedback}`);
            }
            assert.ok(!/Expected one of|allowed values? (is|are)/u.test(verdict.feedback));
            counts.value++;
            break changed;
          }
        }

        missing: for (const [c, call] of gold.entries()) {
          const fn = record.function.find((f) => f.name === call.name) as BfclRecord["function"][number];
          const acceptable = Object.values(record.ground_truth[c] as object)[0] as Record<string, unknown[]>;
          for (const param of Object.keys(call.arguments)) {
            const required = fn.parameters.required?.includes(param) === true;
            if (!required && (acceptable[param] ?? [""]).includes("")) continue;
            const calls = clone(gold);
            delete (calls[c] as JsonCall).arguments[param];
            expectFail(calls, required ? `call ${c + 1} (${call.name}): missing required parameter "${param}"` : `call ${c + 1} (${call.name}): missing parameter "${param}", which this request needs`, `missing ${param}`);
            counts.missing++;
            break missing;
          }
        }

        const extra = clone(gold);
        (extra[0] as JsonCall).arguments.zz_extra_param = 1;
        expectFail(extra, `call 1 (${(gold[0] as JsonCall).name}): unknown parameter "zz_extra_param"`, "extra parameter");
        counts.extra++;

        expectFail(gold.slice(0, -1), gold.length === 1 ? "expected 1 call, got 0" : `expected ${gold.length} calls, got ${gold.length - 1}`, "a call dropped");
        counts.dropped++;

        if (gold.length === 1) {
          const other = record.function.find((f) => f.name !== (gold[0] as JsonCall).name);
          if (other !== undefined) {
            expectFail([{ name: other.name, arguments: {} }], new RegExp(`^The calls do not match: call 1 \\(${escape(other.name)}\\): function "${escape(other.name)}" is not the one this request needs\\.$`), "another function");
            counts.otherFunction++;
          }
        }
      }
      assert.ok(counts.value >= records(name) * 0.95, `changed values in only ${counts.value} records`);
      assert.ok(counts.missing >= records(name) * 0.95, `removed parameters in only ${counts.missing} records`);
      if (name.includes("multiple") && !name.includes("parallel")) assert.equal(counts.otherFunction, 200);
    });
  }

  it("the family's default file is the v4 simple file and loads through the family", async (t) => {
    const file = join(dataDir, bfclFamily.defaultData as string);
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const items = await bfclFamily.load(file, bfclFamily.create({}));
    assert.equal(items.length, 400);
    assert.equal(items[0]?.id, "simple_python_0");
    const prompt = bfclFamily.create({}).prompt(items[0]?.record);
    assert.equal(prompt.length, 1);
    assert.match(prompt[0]?.content ?? "", /"name":"calculate_triangle_area"[\s\S]*Request: Find the area of a triangle[\s\S]*<answer><\/answer>/);
  });

  it("irrelevance files load without an answer file and expect no call", async (t) => {
    const file = join(bfclDir, "v4/BFCL_v4_irrelevance.json");
    if (!existsSync(file)) return t.skip(`shared data not found at ${file}; set REFLECTKIT_DATA`);
    const items = await loadBfcl(file);
    assert.equal(items.length, 240);
    const task = bfclTask();
    for (const { id, record } of items) {
      assert.deepEqual(record.ground_truth, []);
      assert.equal(task.verify(record, "<answer>[]</answer>").correct, true, id);
      assert.equal(task.verify(record, "None of these functions can answer that.").correct, true, id);
      const fn = record.function[0] as BfclRecord["function"][number];
      const verdict = task.verify(record, asJson([{ name: fn.name, arguments: {} }]));
      assert.equal(verdict.correct, false, id);
      assert.match(verdict.feedback, /expected no function call, got 1/);
    }
  });
});

function records(name: string): number {
  return (FILES.find(([file]) => file === name) as [string, number])[1];
}
