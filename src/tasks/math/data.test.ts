import assert from "node:assert/strict";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, describe, it } from "node:test";
import { Rational } from "../countdown/rational.js";
import { InputError } from "../../errors.js";
import type { TaskItem } from "../task.js";
import { loadMath, mathFamily, mathTask, normalizeMathAnswer, type MathRecord } from "./index.js";

const dataDir = resolve(process.cwd(), process.env.REFLECTKIT_DATA ?? "../shared/data");
const math500 = join(dataDir, "math500", "test.jsonl");
const reflectEvo = join(dataDir, "reflectevo", "math_test.jsonl");

/** `n`, `-n`, `\frac{p}{q}`, `-\frac{p}{q}` keys as rationals; null for anything else. */
function keyValue(key: string): Rational | null {
  const integer = /^(-?\d+)$/u.exec(key);
  if (integer !== null) return Rational.of(BigInt(integer[1] as string));
  const fraction = /^(-?)\\frac\{(\d+)\}\{(\d+)\}$/u.exec(key);
  if (fraction === null) return null;
  const value = Rational.of(BigInt(fraction[2] as string), BigInt(fraction[3] as string));
  return fraction[1] === "-" ? value.neg() : value;
}

function latex(value: Rational): string {
  if (value.isInteger()) return value.toString();
  const negative = value.numerator < 0n;
  return `${negative ? "-" : ""}\\frac{${negative ? -value.numerator : value.numerator}}{${value.denominator}}`;
}

/** Gold in \boxed{} verifies; the solution itself verifies; gold + 1 (numbers) and other records' golds fail. */
function checkGolds(items: TaskItem<MathRecord>[], t: { diagnostic(message: string): void }): void {
  const task = mathTask();
  const failures: string[] = [];
  let numeric = 0;
  let unparsed = 0;
  items.forEach(({ id, record }, index) => {
    const gold = normalizeMathAnswer(record.answer);
    if (!gold.parsed) unparsed++;
    for (const output of [`\\boxed{${record.answer}}`, `So the final answer is $\\boxed{${record.answer}}$.`, `<answer>${record.answer}</answer>`, record.solution ?? `\\boxed{${record.answer}}`]) {
      const verdict = task.verify(record, output);
      if (verdict.correct !== true) failures.push(`${id} ${JSON.stringify(output.slice(-60))}: ${verdict.feedback}`);
    }
    const value = keyValue(gold.key);
    if (value !== null) {
      numeric++;
      const corrupted = latex(value.add(Rational.ONE));
      if (task.verify(record, `\\boxed{${corrupted}}`).correct !== false) failures.push(`${id}: gold + 1 = ${corrupted} passed`);
    }
    // A different expression: the next record whose gold normalises differently.
    for (let k = 1; k < items.length; k++) {
      const other = (items[(index + k) % items.length] as TaskItem<MathRecord>).record.answer;
      if (normalizeMathAnswer(other).key === gold.key) continue;
      if (task.verify(record, `\\boxed{${other}}`).correct !== false) failures.push(`${id}: another gold ${other} passed for ${record.answer}`);
      break;
    }
  });
  t.diagnostic(`${items.length} golds verify; ${numeric} are rational numbers (gold + 1 checked); ${unparsed} compared as text`);
  assert.deepEqual(failures, []);
}

describe("MATH-500 (shared data)", () => {
  it("loads 500 records with the answer field as gold", async (t) => {
    if (!existsSync(math500)) return t.skip(`shared data not found at ${math500}; set REFLECTKIT_DATA`);
    const items = await loadMath(math500);
    assert.equal(items.length, 500);
    assert.equal(items[0]?.id, "test.jsonl:1");
    assert.deepEqual({ ...items[0]?.record, problem: undefined, solution: undefined }, {
      problem: undefined,
      solution: undefined,
      answer: "\\left( 3, \\frac{\\pi}{2} \\right)",
      subject: "Precalculus",
      level: 2,
    });
    assert.equal((await mathFamily.load(math500, mathTask() as never)).length, 500);
  });

  it("every gold verifies in \\boxed{}, and corrupted answers fail", async (t) => {
    if (!existsSync(math500)) return t.skip(`shared data not found at ${math500}; set REFLECTKIT_DATA`);
    checkGolds(await loadMath(math500), t);
  });
});

describe("ReflectEvo MATH test (shared data)", () => {
  it("loads 500 MATH records with the gold taken from the last \\boxed{} of the solution", async (t) => {
    if (!existsSync(reflectEvo)) return t.skip(`shared data not found at ${reflectEvo}; set REFLECTKIT_DATA`);
    const items = await loadMath(reflectEvo);
    assert.equal(items.length, 500);
    assert.equal(items[0]?.record.answer, "-5");
    assert.equal(items[0]?.record.level, 3);
    assert.equal(items[0]?.record.subject, "Algebra");
    checkGolds(items, t);
  });

  it("agrees with MATH-500 on the 48 problems they share", async (t) => {
    if (!existsSync(reflectEvo) || !existsSync(math500)) return t.skip(`shared data not found under ${dataDir}; set REFLECTKIT_DATA`);
    const byProblem = new Map((await loadMath(math500)).map(({ record }) => [record.problem.trim(), record]));
    const task = mathTask();
    let shared = 0;
    for (const { record } of await loadMath(reflectEvo)) {
      const other = byProblem.get(record.problem.trim());
      if (other === undefined) continue;
      shared++;
      assert.equal(task.verify(other, record.solution ?? "").correct, true, record.problem);
    }
    assert.equal(shared, 48);
  });
});

describe("MATH loader on malformed files", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-math-"));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("names the file and line of a bad record", async () => {
    const file = join(dir, "bad.jsonl");
    writeFileSync(file, '{"problem": "p", "answer": "1"}\n{"problem": "p", "solution": "no box here"}\n');
    await assert.rejects(loadMath(file), (error: unknown) => {
      assert.ok(error instanceof InputError);
      assert.equal(error.line, 2);
      assert.ok(error.message.startsWith(`${file}:2: `), error.message);
      assert.match(error.message, /no \\boxed\{\}/);
      return true;
    });
    const broken = join(dir, "broken.jsonl");
    writeFileSync(broken, '{"problem": "p", "answer": "1"}\n{"problem": \n');
    await assert.rejects(loadMath(broken), new RegExp(`broken\\.jsonl:2: not valid JSON`));
  });

  it("names the record of a bad .json entry", async () => {
    const file = join(dir, "bad.json");
    writeFileSync(file, JSON.stringify({ data: [{ problem: "p", answer: "1" }, { problem: 3, answer: "1" }] }));
    await assert.rejects(loadMath(file), /bad\.json: record 2: field "problem" must be a non-empty string/);
  });
});
