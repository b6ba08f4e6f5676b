import type { Check } from "../../core/types.js";
import type { ChatMessage, ToolDefinition } from "../../models/language-model.js";
import type { ReplyParts, Task, Verdict } from "../../tasks/task.js";
import { composeVerdict } from "../verdict.js";
import type { Reply, RequestCheck } from "./request-check.js";

export { composeVerdict } from "../verdict.js";

/**
 * The checks a request asks for, as data (so a record can rebuild them: `reflect data generate` from a gateway record).
 * Built by the gateway from `response_format`, `tools` and the `reflect` extension; by the middleware from its call.
 */
export interface RequestCheckSpec {
  /** `response_format: { type: "json_schema", json_schema: { name, schema, strict } }`. */
  schema?: { name?: string; schema: Record<string, unknown> };
  /** The request's `tools`: every tool call must name one, with arguments valid against its parameters. */
  tools?: ToolDefinition[];
  /** `tool_choice` was `required` or named a function: a reply without a tool call fails. */
  toolsRequired?: boolean;
  /** `reflect.regex`: the reply must match. */
  regex?: { pattern: string; flags?: string };
  /** `reflect.task` + `reflect.item`: a registered task's verifier on its record. */
  task?: { name: string; item: unknown };
  /** `reflect.tests`: Python asserts run in the sandbox against the code in the reply. */
  tests?: string[];
}

/** A request as a loop item: the conversation the caller sent (text, tool calls and tool results) and the checks it asked for. */
export interface RequestRecord {
  messages: ChatMessage[];
  checks: RequestCheckSpec;
  /** The API the request came in on, when a gateway recorded it: `chat`, `responses` or `messages`. */
  dialect?: string;
  /** The request's sampling and `reflect` options as the gateway read them, so `reflect replay` sends the same request. */
  options?: RecordedRequestOptions;
}

/**
 * A reflected request's options besides its conversation and checks, under their Chat Completions names (any dialect's
 * request reads into the same loop request, so these rebuild it whatever door it came in by).
 */
export interface RecordedRequestOptions {
  /** Absent: the request set none, and the upstream was sent none. */
  max_tokens?: number;
  temperature?: number;
  top_p?: number;
  stop?: string[];
  seed?: number;
  /** `response_format: json_object`: a JSON object asked of the upstream, with no schema check. */
  json_object?: boolean;
  reflect: {
    max_turns: number;
    feedback: string;
    stop?: string;
    budget: { tokens?: number; calls?: number; seconds?: number };
    judge?: string;
    reflection_max_tokens?: number;
    on_failure: "return" | "error";
    /** `reflect.memory`: the key the request's lessons are filed and recalled under, and how many it is shown. */
    memory?: { key: string; lessons: number };
  };
}

/**
 * A request's checks as a task, so the loops of `reflect eval` run a live request unchanged: the prompt is the
 * request's own conversation, and the verdict is the request's deterministic checks, run cheapest first up to the
 * first that does not pass (`Verdict.checks` lists the ones run). Without any check the verdict is "cannot judge"
 * (a judge critic alone decides). A check that throws counts as "cannot judge", with the reason. A vacuous check
 * (`RequestCheck.vacuous`: it cannot fail) is left out — it verifies nothing — so a request whose checks are all
 * vacuous is "cannot judge", its feedback naming why, and never verified.
 */
export function requestTask(checks: readonly RequestCheck[], name = "gateway"): Task<RequestRecord, Promise<Verdict>> {
  const judging = checks.filter((c) => c.vacuous === undefined);
  const vacuous = checks.flatMap((c) => (c.vacuous === undefined ? [] : [`the ${c.name} check judges nothing: ${c.vacuous}`]));
  return {
    name,
    prompt: (record) => record.messages.map((m) => ({ ...m })),
    async verify(_record, output, parts?: ReplyParts): Promise<Verdict> {
      const reply: Reply = { text: output, ...(parts?.toolCalls === undefined ? {} : { toolCalls: parts.toolCalls }) };
      const run: Check[] = [];
      if (judging.length === 0 && vacuous.length > 0) return { ...composeVerdict(run, answerOf(reply)), feedback: `Cannot judge: ${vacuous.join("; ")}.` };
      for (const check of judging) {
        let result: Check;
        try {
          result = await check.run(reply);
        } catch (error) {
          result = { source: check.source, pass: null, score: 0, feedback: `the ${check.name} check failed: ${(error as Error).message}` };
        }
        run.push(result);
        if (result.pass !== true) break;
      }
      return composeVerdict(run, answerOf(reply));
    },
    parseRecord(value: unknown): RequestRecord {
      const messages = (value as { messages?: unknown } | null)?.messages;
      if (!Array.isArray(messages) || !messages.every((m) => typeof m?.content === "string" && ["system", "user", "assistant"].includes(m?.role))) {
        throw new Error("a request record needs messages: [{ role: system|user|assistant, content: string }]");
      }
      const checks = (value as { checks?: unknown }).checks;
      if (typeof checks !== "object" || checks === null || Array.isArray(checks)) throw new Error("a request record needs checks: an object (RequestCheckSpec)");
      return { messages: messages as ChatMessage[], checks: checks as RequestCheckSpec };
    },
  };
}

/** The answer of a reply, for answer-change rates: its tool calls when it made any, else its trimmed text. */
function answerOf(reply: Reply): string | null {
  if (reply.toolCalls !== undefined && reply.toolCalls.length > 0) return JSON.stringify(reply.toolCalls.map((c) => [c.name, c.arguments]));
  const text = reply.text.trim();
  return text === "" ? null : text;
}
