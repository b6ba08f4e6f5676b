/**
 * A scripted upstream for an agent's requests through the gateway: a support agent told to look up an order and refund
 * it, with the tools `lookup_order` and `refund` (`order_id` an integer). Shared by the gateway's route-lesson test and
 * the OpenAI Agents SDK example's test. Not a test file itself.
 */
import { completion, type Behaviour } from "./serve-harness.js";

/** The lesson the upstream writes when asked to reflect on a failed call. */
export const ORDER_LESSON = "The lookup_order call passed order_id as a word; order_id is an integer, so pass the number itself.";

/** The agent's tools in Chat Completions' shape. */
export const orderTools = [
  { type: "function", function: { name: "lookup_order", description: "Reads an order.", parameters: { type: "object", properties: { order_id: { type: "integer" } }, required: ["order_id"], additionalProperties: false } } },
  { type: "function", function: { name: "refund", description: "Refunds an order.", parameters: { type: "object", properties: { order_id: { type: "integer" } }, required: ["order_id"], additionalProperties: false } } },
];

interface ChatTurn {
  role: string;
  content?: unknown;
  tool_calls?: Array<{ function: { name: string } }>;
}

const textOf = (content: unknown): string => (typeof content === "string" ? content : Array.isArray(content) ? content.map((p: { text?: unknown }) => (typeof p?.text === "string" ? p.text : "")).join("") : "");

/**
 * A model that follows its notes. Asked to reflect, it writes `ORDER_LESSON`. Otherwise it takes the agent's next step:
 * `lookup_order` until the history holds a result, then `refund`, then a closing text once the refund's result is in.
 * It passes the order id (the first number of the first user turn) as a number when told to try again or shown the
 * lesson in its notes, else as a word — which the tool's schema refuses.
 */
export const orderAgentUpstream: Behaviour = (res, seen, index) => {
  const messages = (seen.body.messages ?? []) as ChatTurn[];
  const last = textOf(messages.at(-1)?.content);
  const all = JSON.stringify(messages);
  const body = completion(null, { prompt_tokens: 40, completion_tokens: 8 });
  const choice = (body.choices as Array<Record<string, unknown>>)[0] as Record<string, unknown>;
  const order = Number(/\d+/u.exec(textOf(messages.find((m) => m.role === "user" && !textOf(m.content).includes("<notes>"))?.content))?.[0] ?? 0);
  const called = messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.function.name);
  const answered = messages.some((m) => m.role === "tool");
  if (last.includes("Reflect on what went wrong")) {
    choice.message = { role: "assistant", content: ORDER_LESSON };
  } else if (answered && called.includes("refund")) {
    choice.message = { role: "assistant", content: `Order ${order} is refunded.` };
  } else {
    const valid = last.includes("Now try again") || all.includes("order_id is an integer");
    const name = answered ? "refund" : "lookup_order";
    choice.message = { role: "assistant", content: null, tool_calls: [{ id: `call_${index}`, type: "function", function: { name, arguments: JSON.stringify({ order_id: valid ? order : "seven" }) } }] };
    choice.finish_reason = "tool_calls";
  }
  res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(body));
};
