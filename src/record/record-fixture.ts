/**
 * Gateway episodes built in tests, without a model or a server: the shape the gateway's cascade writes for one request
 * (a request record, attempts with composite verdicts, reflections between them). Not a test file itself (a `test-*`
 * name would make `node --test dist/` run it as one).
 */
import type { AttemptRecord, Check, Episode, ModelCall } from "../loops/types.js";
import type { ChatMessage } from "../models/language-model.js";
import type { RequestRecord } from "../critics/request/request-task.js";

export interface RequestEpisodeSpec {
  id: string;
  /** Each attempt's verdict, in order; a reflection follows every attempt but the last. */
  passes: readonly boolean[];
  /** The turn the loop returns (default: the last). */
  selected?: number;
  startedAt?: string;
  /** The question (the request's last user message). */
  question?: string;
  /** Each attempt's output (default `answer N`). */
  outputs?: readonly string[];
  /** Tokens of every call: prompt and completion. */
  usage?: { prompt: number; completion: number };
  record?: RequestRecord;
  /** Prefix of every text, so a test can look for any text that got through (redaction). */
  mark?: string;
  /** Adds a judge check with its call, tool calls, lessons and an error: every field that carries text. */
  everyField?: boolean;
}

const MODEL = "upstream";

/** An episode as the gateway's cascade records it: reflect-retry turns with a regex check. */
export function requestEpisode(spec: RequestEpisodeSpec): Episode<RequestRecord> {
  const t = (field: string) => (spec.mark === undefined ? field : `${spec.mark}:${field}:${spec.id}`);
  const usage = spec.usage ?? { prompt: 10, completion: 5 };
  const question = spec.question ?? t("What is 2 + 2?");
  const record: RequestRecord = spec.record ?? {
    messages: [
      { role: "system", content: t("system prompt") },
      { role: "user", content: question },
    ],
    checks: { regex: { pattern: t("^4$") }, ...(spec.everyField ? { tests: [t("assert f() == 1")], task: { name: "gsm8k", item: { question: t("task item") } } } : {}) },
  };
  const call = (role: ModelCall["role"], messages: ChatMessage[], output: string): ModelCall => ({
    role,
    model: MODEL,
    messages,
    output,
    finishReason: "stop",
    usage: { promptTokens: usage.prompt, evaluatedPromptTokens: usage.prompt, completionTokens: usage.completion },
    seed: 7,
    ms: 3,
  });
  const messages: ChatMessage[] = record.messages.map((m) => ({ ...m }));
  const attempts: AttemptRecord[] = [];
  const selected = spec.selected ?? spec.passes.length;
  spec.passes.forEach((pass, i) => {
    const output = spec.outputs?.[i] ?? t(`answer ${i + 1}`);
    const attemptCall = call("attempt", messages.map((m) => ({ ...m })), output);
    if (spec.everyField) attemptCall.toolCalls = [{ id: `call-${i}`, name: "lookup", arguments: t(`{"q": "tool argument ${i}"}`) }];
    const check: Check = { source: "regex", pass, score: pass ? 1 : 0, feedback: pass ? t("every check passed") : t(`the reply does not match ${i}`) };
    const checks: Check[] = [check];
    if (spec.everyField && pass) checks.push({ source: "judge", pass: true, score: 0.9, feedback: t("judge feedback"), categories: ["calculation"], call: call("critique", [{ role: "user", content: t("judge request") }], t("judge verdict text")) });
    const last = i === spec.passes.length - 1;
    const attempt: AttemptRecord = {
      turn: i + 1,
      call: attemptCall,
      verdict: { correct: pass, score: pass ? 1 : 0, feedback: check.feedback, answer: output, checks: [check] },
      checks,
      decision: last ? (selected === i + 1 ? "accept" : "rollback") : "continue",
      selected: last ? selected : i + 1,
      ...(spec.everyField ? { lessons: [t("a lesson")] } : {}),
    };
    messages.push({ role: "assistant", content: output });
    if (!last) {
      const request: ChatMessage = { role: "user", content: t(`Reflect on what went wrong ${i}`) };
      const reflection = call("reflection", [...messages.map((m) => ({ ...m })), request], t(`reflection text ${i}`));
      attempt.reflection = { feedbackShown: t(`feedback shown ${i}`), call: reflection };
      messages.push(request, { role: "assistant", content: reflection.output }, { role: "user", content: question });
    }
    attempts.push(attempt);
  });
  const calls = attempts.length * 2 - 1 + (spec.everyField ? 1 : 0);
  const reflections = attempts.length - 1;
  const judge = spec.everyField ? 1 : 0;
  return {
    id: spec.id,
    task: "gateway",
    strategy: "cascade",
    model: MODEL,
    record,
    attempts,
    selected,
    correct: spec.passes[selected - 1] === true,
    solvedAt: spec.passes.indexOf(true) === -1 ? null : spec.passes.indexOf(true) + 1,
    stoppedBy: spec.passes.at(-1) === true ? "verified" : `turns:${spec.passes.length}`,
    ...(spec.everyField ? { error: { name: "ModelCallError", message: t("upstream said no"), status: 502 } } : {}),
    usage: { promptTokens: calls * usage.prompt, evaluatedPromptTokens: calls * usage.prompt, completionTokens: calls * usage.completion, calls },
    usageByRole: {
      attempt: { tokens: attempts.length * (usage.prompt + usage.completion), calls: attempts.length },
      ...(reflections > 0 ? { reflection: { tokens: reflections * (usage.prompt + usage.completion), calls: reflections } } : {}),
      ...(judge > 0 ? { critique: { tokens: usage.prompt + usage.completion, calls: 1 } } : {}),
    },
    ms: 10,
    ...(spec.startedAt === undefined ? {} : { startedAt: spec.startedAt }),
  };
}
