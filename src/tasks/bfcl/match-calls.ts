import { quote, valueProblems } from "./match-value.js";
import type { ParsedCall } from "./parse-calls.js";
import type { BfclFunction, BfclRecord } from "./types.js";

/** An expected call with the doc of its function. */
export interface ExpectedCall {
  fn: BfclFunction;
  params: Record<string, unknown[]>;
}

export type CallsCheck =
  | { judged: false; reason: string }
  /** `matched`: model calls paired with an expected call (0 when the counts differ). */
  | { judged: true; correct: boolean; matched: number; expected: number; problems: string[] };

/**
 * The doc a name refers to: the function of that exact name, else one whose name with dots turned into underscores
 * is that name (BFCL's `convert_func_name`, for APIs that forbid dots in tool names), else undefined.
 */
export function findFunction(functions: readonly BfclFunction[], name: string): BfclFunction | undefined {
  return functions.find((fn) => fn.name === name) ?? functions.find((fn) => fn.name.includes(".") && fn.name.replace(/\./gu, "_") === name);
}

/**
 * The expected calls with their docs, or the name of one whose function the record does not offer. Like BFCL's
 * simple checker, a record offering a single function expects that one whatever name the answer gives it (v3's
 * `simple_363` names `find_closest` for the doc `restaurant_search.find_closest`).
 */
export function expectedCalls(record: BfclRecord): { ok: true; calls: ExpectedCall[] } | { ok: false; missing: string } {
  const calls: ExpectedCall[] = [];
  for (const entry of record.ground_truth) {
    const [name, params] = Object.entries(entry)[0] as [string, Record<string, unknown[]>];
    const fn = findFunction(record.function, name) ?? (record.function.length === 1 ? record.function[0] : undefined);
    if (fn === undefined) return { ok: false, missing: name };
    calls.push({ fn, params });
  }
  return { ok: true, calls };
}

/**
 * The problems of one call against one expected call of the same function: required parameters (from the doc)
 * present, no parameter the doc lacks, none the answer does not allow, each value acceptable (`valueProblems`),
 * and every parameter the answer needs (no `""` among its values) present. Empty when the call matches.
 */
export function callProblems(call: ParsedCall, expected: ExpectedCall): string[] {
  const properties = expected.fn.parameters.properties ?? {};
  const required = expected.fn.parameters.required ?? [];
  const problems: string[] = [];
  for (const name of required) if (!call.args.has(name)) problems.push(`missing required parameter ${quote(name)}`);
  for (const [name, value] of call.args) {
    if (!Object.hasOwn(properties, name)) problems.push(`unknown parameter ${quote(name)}`);
    else if (!Object.hasOwn(expected.params, name)) problems.push(`parameter ${quote(name)} should not be given for this request`);
    else problems.push(...valueProblems(value, properties[name], expected.params[name] as unknown[], `parameter ${quote(name)}`));
  }
  for (const [name, values] of Object.entries(expected.params)) {
    if (!call.args.has(name) && !required.includes(name) && !values.includes("")) problems.push(`missing parameter ${quote(name)}, which this request needs`);
  }
  return problems;
}

/**
 * Checks a model's calls against the record's expected calls, order-free as BFCL's parallel checker: the counts
 * must be equal, and each call is paired with a distinct expected call it matches. Unlike BFCL's greedy pairing,
 * the pairing is a maximum bipartite matching, so an order that a greedy pass would get wrong still counts. For
 * each call left unpaired, the problems name what is wrong with it: against the unpaired expected call of the same
 * function with the fewest problems, else that its function does not exist or is not the one needed.
 */
export function checkCalls(calls: readonly ParsedCall[], record: BfclRecord): CallsCheck {
  const resolved = expectedCalls(record);
  if (!resolved.ok) return { judged: false, reason: `the expected call names function ${quote(resolved.missing)}, which the record does not offer` };
  const expected = resolved.calls;
  if (calls.length !== expected.length) {
    const problem = expected.length === 0 ? `expected no function call, got ${calls.length}` : `expected ${expected.length} call${expected.length === 1 ? "" : "s"}, got ${calls.length}`;
    return { judged: true, correct: false, matched: 0, expected: expected.length, problems: [problem] };
  }
  const fns = calls.map((call) => findFunction(record.function, call.name));
  const problems = calls.map((call, i) => expected.map((exp) => (fns[i] === exp.fn ? callProblems(call, exp) : null)));
  const pairOf = maximumMatching(calls.length, expected.length, (i, j) => problems[i]?.[j]?.length === 0);
  const matched = pairOf.filter((j) => j !== -1).length;
  if (matched === calls.length) return { judged: true, correct: true, matched, expected: expected.length, problems: [] };
  const taken = new Set(pairOf);
  const report: string[] = [];
  calls.forEach((call, i) => {
    if (pairOf[i] !== -1) return;
    const label = `call ${i + 1} (${displayName(call.name)})`;
    const fn = fns[i];
    if (fn === undefined) {
      report.push(`${label}: function ${quote(call.name)} does not exist`);
      return;
    }
    let best: string[] | null = null;
    expected.forEach((_, j) => {
      const candidate = problems[i]?.[j];
      if (taken.has(j) || candidate === null || candidate === undefined) return;
      if (best === null || candidate.length < best.length) best = candidate;
    });
    if (best !== null) report.push(...(best as string[]).map((problem) => `${label}: ${problem}`));
    else if (expected.some((exp) => exp.fn === fn)) report.push(`${label}: one call to ${quote(fn.name)} too many — a different function is needed`);
    else report.push(`${label}: function ${quote(call.name)} is not the one this request needs`);
  });
  return { judged: true, correct: false, matched, expected: expected.length, problems: report };
}

/** For each left vertex, its partner on the right (or -1), in a maximum matching found by augmenting paths. */
function maximumMatching(left: number, right: number, edge: (i: number, j: number) => boolean): number[] {
  const pairOfLeft = new Array<number>(left).fill(-1);
  const pairOfRight = new Array<number>(right).fill(-1);
  const augment = (i: number, seen: boolean[]): boolean => {
    for (let j = 0; j < right; j++) {
      if (seen[j] || !edge(i, j)) continue;
      seen[j] = true;
      if (pairOfRight[j] === -1 || augment(pairOfRight[j] as number, seen)) {
        pairOfLeft[i] = j;
        pairOfRight[j] = i;
        return true;
      }
    }
    return false;
  };
  for (let i = 0; i < left; i++) augment(i, new Array<boolean>(right).fill(false));
  return pairOfLeft;
}

/** A function name as written when it looks like one, else quoted and cut. */
function displayName(name: string): string {
  return /^[A-Za-z0-9_.-]{1,64}$/u.test(name) ? name : quote(name);
}
