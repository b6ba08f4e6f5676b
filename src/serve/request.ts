/**
 * What the gateway makes of the loop's request once a dialect has parsed it (src/serve/loop-request.ts): the cascade's
 * resolved options, and the options a record keeps to replay it.
 */
import { RequestFieldError } from "../errors.js";
import type { ResolvedStrategy } from "../loops/strategies.js";
import type { RecordedRequestOptions } from "../critics/request/request-task.js";
import { gatewayResolve, type ChatRequest } from "./loop-request.js";


/**
 * The gateway's door onto the strategies' registry: a parsed reflected request as the cascade's resolved options.
 * The attempt's limit is the request's `max_tokens`; where it sets none, the attempts send none (the upstream's own
 * default, under the request's token budget) and the resolved limit is the registry's, which they do not use. Pure.
 */
export function resolveGatewayStrategy(chat: Pick<ChatRequest, "reflect" | "sampling">): ResolvedStrategy {
  const reflect = chat.reflect;
  if (reflect === undefined) throw new RequestFieldError("reflect", "is absent: the request is passed through, not reflected");
  return gatewayResolve({
    turns: reflect.maxTurns,
    feedback: reflect.feedback,
    ...(reflect.stopWhen === undefined ? {} : { stopWhen: reflect.stopWhen }),
    ...(reflect.reflectionMaxTokens === undefined ? {} : { reflectionMaxTokens: reflect.reflectionMaxTokens }),
    ...(chat.sampling.maxTokens === undefined ? {} : { attemptMaxTokens: chat.sampling.maxTokens }),
  });
}

/** A reflected request's options as its record keeps them (`RequestRecord.options`), under their Chat Completions names. */
export function recordedOptions(chat: Pick<ChatRequest, "sampling" | "seed" | "checks" | "reflect">): RecordedRequestOptions {
  const reflect = chat.reflect;
  if (reflect === undefined) throw new RequestFieldError("reflect", "is absent: only a reflected request is recorded");
  const { sampling } = chat;
  return {
    ...(sampling.maxTokens === undefined ? {} : { max_tokens: sampling.maxTokens }),
    ...(sampling.temperature === undefined ? {} : { temperature: sampling.temperature }),
    ...(sampling.topP === undefined ? {} : { top_p: sampling.topP }),
    ...(sampling.stop === undefined ? {} : { stop: [...sampling.stop] }),
    ...(chat.seed === undefined ? {} : { seed: chat.seed }),
    ...(sampling.responseFormat !== undefined && chat.checks.schema === undefined ? { json_object: true } : {}),
    reflect: {
      max_turns: reflect.maxTurns,
      feedback: reflect.feedback,
      ...(reflect.stopSpec === undefined ? {} : { stop: reflect.stopSpec }),
      budget: {
        ...(reflect.budget.tokens === undefined ? {} : { tokens: reflect.budget.tokens }),
        ...(reflect.budget.calls === undefined ? {} : { calls: reflect.budget.calls }),
        ...(reflect.budget.ms === undefined ? {} : { seconds: Math.ceil(reflect.budget.ms / 1000) }),
      },
      ...(reflect.judge === undefined ? {} : { judge: reflect.judge }),
      ...(reflect.reflectionMaxTokens === undefined ? {} : { reflection_max_tokens: reflect.reflectionMaxTokens }),
      on_failure: reflect.onFailure,
      ...(reflect.memory === undefined ? {} : { memory: { key: reflect.memory.key, lessons: reflect.memory.lessons } }),
    },
  };
}
