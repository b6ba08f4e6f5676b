/**
 * The conformance cases of every registered task family: gold replies, corrupted replies and the record they answer.
 * Shared by the conformance suite (conformance.test.ts) and the verifier throughput benchmark.
 */
import path from "node:path";
import { arithmeticAnswer, type ArithmeticRecord } from "./arithmetic/index.js";
import { bbhKind, type BbhKind, type BbhRecord } from "./bbh/index.js";
import { referenceCalls, type BfclRecord, type JsonCall } from "./bfcl/index.js";
import { parseOptionList } from "./choice/index.js";
import type { ConformanceCase, ConformanceSpec } from "./conformance.js";
import { Rational, solveCountdown, type CountdownRecord } from "./countdown/index.js";
import { formatNumber, parseAnswerNumber, type Gsm8kRecord } from "./gsm8k/index.js";
import type { HumanevalRecord } from "./humaneval/index.js";
import type { IfevalRecord } from "./ifeval/index.js";
import { generateJsonCases, type JsonRecord } from "./json/index.js";
import { LOGIQA_LETTERS, type LogiqaRecord } from "./logiqa/index.js";
import { normalizeMathAnswer, type MathRecord } from "./math/index.js";
import type { MbppRecord } from "./mbpp/index.js";
import { bigbenchOptions, type ReflectevoBigbenchRecord } from "./reflectevo-bigbench/index.js";
import { dataDir, findTaskFamily } from "./registry.js";
import type { Judgement, Task, TaskItem } from "./task.js";

/** The task the CLI runs for a family, typed by its record. */
function registered<R>(name: string): Task<R, Judgement> {
  return findTaskFamily(name).create({}) as Task<R, Judgement>;
}

/** The first `limit` items of a family's default data file. */
async function defaultItems<R>(name: string, limit: number): Promise<TaskItem<R>[]> {
  const family = findTaskFamily(name);
  const file = family.defaultData as string;
  const items = await family.load(path.join(dataDir(), file), family.create({}));
  return (items as TaskItem<R>[]).slice(0, limit);
}

const tagged = (text: string) => `<answer>${text}</answer>`;
const fence = (code: string) => `\`\`\`python\n${code}\n\`\`\``;

/** A data-backed spec: cases from the first `limit` items of the family's default file. */
function fromData<R>(name: string, limit: number, toCase: (item: TaskItem<R>, items: TaskItem<R>[], index: number) => ConformanceCase<R>, minGoldRate?: number): ConformanceSpec<R> {
  const spec: ConformanceSpec<R> = {
    name,
    task: registered<R>(name),
    data: findTaskFamily(name).defaultData as string,
    cases: async () => {
      const items = await defaultItems<R>(name, limit);
      return items.map((item, index) => toCase(item, items, index));
    },
  };
  if (minGoldRate !== undefined) spec.minGoldRate = minGoldRate;
  return spec;
}

/** A spec whose task's references, written as replies by `reply`, must verify. */
const withReference = <R>(spec: ConformanceSpec<R>, reply: (reference: string) => string): ConformanceSpec<R> => ({ ...spec, referenceReply: reply });

/** A different BBH answer of the same kind: a reply that must fail. */
export function bbhCorrupted(kind: BbhKind, record: BbhRecord): string {
  const t = record.target;
  switch (kind) {
    case "choice": {
      const letters = parseOptionList(record.input)?.letters ?? "AB";
      return `(${letters[(letters.indexOf(t[1] as string) + 1) % letters.length]})`;
    }
    case "boolean":
      return t === "True" ? "False" : "True";
    case "yes-no":
      return /^yes$/iu.test(t) ? "No" : "Yes";
    case "validity":
      return t === "valid" ? "invalid" : "valid";
    case "integer":
      return String(Number(t) + 1);
    case "dyck":
      return t.split(" ").length > 1 ? t.split(" ").slice(1).join(" ") : `${t} )`;
    case "words":
      return t.split(" ").length > 1 ? t.split(" ").reverse().join(" ") : `${t} zzz`;
    case "text":
      return "(A)";
  }
}

/** A value of the same type as `value` that BFCL's acceptable lists do not hold, or undefined. */
function bfclWrongValue(value: unknown): unknown {
  if (typeof value === "string") return "zzq not an allowed value";
  if (typeof value === "number") return Number.isInteger(value) ? 987654321 : 98765.4321;
  return undefined;
}

function bfclCorrupted(calls: JsonCall[]): string[] {
  const json = (c: JsonCall[]) => tagged(JSON.stringify(c));
  const out = [json(calls.map((call) => ({ ...call, name: `${call.name}_renamed` }))), json([]), json(calls.slice(1))];
  const [first, ...rest] = calls;
  if (first !== undefined) {
    const entry = Object.entries(first.arguments).find(([, value]) => bfclWrongValue(value) !== undefined);
    if (entry !== undefined) out.push(json([{ name: first.name, arguments: { ...first.arguments, [entry[0]]: bfclWrongValue(entry[1]) } }, ...rest]));
    out.push(json([...calls, first])); // one call too many
  }
  return out;
}

/** One spec per registered task family: the conformance suite runs them, and so does bench/verifiers.mjs. */
export const conformanceSpecs: ConformanceSpec<never>[] = [];
const specs = conformanceSpecs;
const add = <R>(spec: ConformanceSpec<R>) => specs.push(spec as unknown as ConformanceSpec<never>);

add<CountdownRecord>({
  name: "countdown",
  task: registered("countdown"),
  cases: async () =>
    (findTaskFamily("countdown").generate?.(1, 200) as TaskItem<CountdownRecord>[]).flatMap(({ id, record }) => {
      const expression = solveCountdown(record.nums, record.target);
      if (expression === null) return [];
      const dropped = solveCountdown(record.nums.slice(1), record.target);
      const corrupted = [tagged(`(${expression}) + 1`), tagged(`(${expression}) * 1`), tagged(String(record.target)), tagged(record.nums.join(" + ") + ` + ${record.target}`)];
      if (dropped !== null) corrupted.push(tagged(dropped)); // a number left out (strict mode)
      return [{ id, record, gold: tagged(expression), corrupted }];
    }),
});

add<ArithmeticRecord>({
  name: "arithmetic",
  task: registered("arithmetic"),
  referenceReply: tagged,
  cases: async () =>
    (findTaskFamily("arithmetic").generate?.(1, 200) as TaskItem<ArithmeticRecord>[]).map(({ id, record }) => {
      const answer = arithmeticAnswer(record);
      return { id, record, gold: tagged(String(answer)), corrupted: [tagged(String(answer + 1)), tagged(String(-answer - 1)), `The answer is ${answer - 1}.`, tagged(`${answer} or ${answer + 1}`)] };
    }),
});

add(
  withReference(
    fromData<Gsm8kRecord>("gsm8k", 200, ({ id, record }) => {
      const wrong = formatNumber((parseAnswerNumber(record.answer) as Rational).add(Rational.ONE));
      return { id, record, gold: tagged(record.answer), corrupted: [tagged(wrong), `The answer is ${wrong}.`, tagged("")] };
    }),
    tagged,
  ),
);

add(
  withReference(
    fromData<MathRecord>("math", 200, ({ id, record }, items, index) => {
      const key = normalizeMathAnswer(record.answer).key;
      const corrupted = [`\\boxed{}`];
      for (let k = 1; k < items.length; k++) {
        const other = (items[(index + k) % items.length] as TaskItem<MathRecord>).record.answer;
        if (normalizeMathAnswer(other).key === key) continue;
        corrupted.push(`\\boxed{${other}}`); // another record's gold
        break;
      }
      return { id, record, gold: `So the final answer is $\\boxed{${record.answer}}$.`, corrupted };
    }),
    (answer) => `\\boxed{${answer}}`,
  ),
);

add(
  withReference(
    fromData<LogiqaRecord>("logiqa", 200, ({ id, record }) => ({
      id,
      record,
      gold: tagged(record.gold),
      corrupted: [...LOGIQA_LETTERS].filter((letter) => letter !== record.gold).map(tagged),
    })),
    tagged,
  ),
);

/** BBH's default is the folder of 27 tasks; 8 items of each keep every answer kind in the suite. */
const bbhCase = ({ id, record }: TaskItem<BbhRecord>): ConformanceCase<BbhRecord> => ({ id, record, gold: tagged(record.target), corrupted: [tagged(bbhCorrupted(bbhKind(record.task, record.target), record))] });
add<BbhRecord>({
  ...fromData<BbhRecord>("bbh", Infinity, bbhCase),
  referenceReply: tagged,
  cases: async () => {
    const perTask = new Map<string, number>();
    const items = await defaultItems<BbhRecord>("bbh", Infinity);
    return items.filter(({ record }) => (perTask.set(record.task, (perTask.get(record.task) ?? 0) + 1).get(record.task) as number) <= 8).map(bbhCase);
  },
});

add(
  withReference(
    fromData<ReflectevoBigbenchRecord>("reflectevo-bigbench", 200, ({ id, record }) => {
      const gold = record.answers[0] as string;
      const options = bigbenchOptions(record);
      const other = options === null ? `${gold} zzzq` : (options.letters[(options.letters.indexOf(gold.toUpperCase()) + 1) % options.letters.length] as string);
      return { id, record, gold: tagged(gold), corrupted: [tagged(other), tagged("qqq")] };
    }),
    tagged,
  ),
);

add<JsonRecord>({
  name: "json",
  task: registered("json"),
  cases: async () =>
    generateJsonCases({ seed: 1, count: 200 }).map(({ id, record, gold }) => {
      const text = JSON.stringify(gold);
      return { id, record, gold: tagged(text), corrupted: [tagged(text.slice(0, -1)), tagged("[]"), tagged("{}"), tagged(`{"unexpected": ${text}}`)] };
    }),
});

add(
  withReference(
    fromData<BfclRecord>("bfcl", 200, ({ id, record }) => {
      const reference = referenceCalls(record);
      if (reference === null) return { id, record, gold: tagged("[]"), corrupted: [] }; // counted as a failing gold
      return { id, record, gold: tagged(JSON.stringify(reference.calls)), corrupted: bfclCorrupted(reference.calls) };
    }),
    tagged,
  ),
);

/** IFEval ships prompts and instructions but no gold responses: only the reference (null) and arbitrary-text tests apply. */
add({ ...fromData<IfevalRecord>("ifeval", 200, ({ id, record }) => ({ id, record, corrupted: [] })), noGold: "IFEval ships no gold responses: no gold or corrupted replies" });

/** MBPP and HumanEval run in the sandbox: the first 20 items keep this file fast; their data tests run all. */
add(
  withReference(
    fromData<MbppRecord>(
      "mbpp",
      20,
      ({ id, record }) => {
        const names = [...(record.code ?? "").matchAll(/^def\s+(\w+)/gmu)].map((m) => m[1] as string);
        const name = names.find((n) => new RegExp(`\\b${n}\\s*\\(`, "u").test(record.tests[0] ?? "")) ?? names[0] ?? "solution";
        return { id, record, gold: fence(record.code ?? ""), corrupted: [fence(`${record.code ?? ""}\n\ndef ${name}(*args, **kwargs):\n    return None\n`), fence(`def ${name}_renamed(*args, **kwargs):\n    return None\n`)] };
      },
      0.99,
    ),
    fence,
  ),
);

add(
  withReference(
    fromData<HumanevalRecord>(
      "humaneval",
      20,
      ({ id, record }) => ({
        id,
        record,
        gold: record.canonicalSolution ?? "",
        corrupted: [fence(`def ${record.entryPoint}(*args, **kwargs):\n    return None\n`), "    return None\n"],
      }),
      0.99,
    ),
    (solution) => solution,
  ),
);
