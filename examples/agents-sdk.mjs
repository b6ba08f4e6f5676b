// An OpenAI Agents SDK agent through the reflect gateway: its failed tool call is reflected on before it reaches the
// agent, and the lesson is shown to its later steps and runs.
//
//   reflect serve --config examples/agents-sdk.yaml --upstream http://HOST/v1#MODEL --memory lessons.db
//   REFLECT_GATEWAY_URL=http://127.0.0.1:8787/v1 node examples/agents-sdk.mjs
//
// The agent is the SDK's own (`Agent`, `tool`, `run`) on its Chat Completions model, with one change: its OpenAI client
// points at the gateway and names the agent's route (`x-reflect-route: support-agent`). The gateway's policy for that
// route (examples/agents-sdk.yaml) checks every step: a tool call whose arguments break the tool's JSON schema fails
// the gateway's tools check, the upstream is told which rule it broke, reflects and calls again, and only the valid call
// reaches the agent. The reflection is filed as a lesson under the route, and every later request on the route (the
// agent's next step, its next run) is shown it. The client's fetch reads the gateway's `reflect` report of each step
// (attempts, decision, the checks that failed), which the SDK itself does not surface.
//
// Environment: REFLECT_GATEWAY_URL (default http://127.0.0.1:8787/v1), REFLECT_GATEWAY_KEY (a tenant's key, when the
// gateway has keys), REFLECT_MODEL (the `model` to send; default the gateway's upstream).
import { Agent, OpenAIChatCompletionsModel, run, setTracingDisabled, tool } from "@openai/agents";
import OpenAI from "openai";

setTracingDisabled(true); // the SDK's traces would go to OpenAI's platform; nothing here leaves the gateway
const baseURL = process.env.REFLECT_GATEWAY_URL ?? "http://127.0.0.1:8787/v1";
const ROUTE = "support-agent";

/** What the gateway said about each of the agent's model calls, read from its answers as they pass. */
const steps = [];
const observingFetch = async (input, init) => {
  const response = await fetch(input, init);
  if (response.ok && String(input).endsWith("/chat/completions")) {
    const reflect = (await response.clone().json()).reflect;
    if (reflect !== undefined) steps.push(reflect);
  }
  return response;
};
const client = new OpenAI({ baseURL, apiKey: process.env.REFLECT_GATEWAY_KEY ?? "unused", defaultHeaders: { "x-reflect-route": ROUTE }, fetch: observingFetch, maxRetries: 0 });

const orders = new Map([[7, { status: "paid", amount: "30 EUR" }], [8, { status: "paid", amount: "12 EUR" }]]);
const executed = [];
const orderId = { type: "object", properties: { order_id: { type: "integer" } }, required: ["order_id"], additionalProperties: false };
const lookupOrder = tool({
  name: "lookup_order",
  description: "Reads an order.",
  parameters: orderId,
  strict: true,
  execute: async ({ order_id }) => {
    executed.push(`lookup_order(${JSON.stringify({ order_id })})`);
    const order = orders.get(order_id);
    return order === undefined ? `no order ${order_id}` : `order ${order_id}: ${order.status}, ${order.amount}`;
  },
});
const refund = tool({
  name: "refund",
  description: "Refunds an order.",
  parameters: orderId,
  strict: true,
  execute: async ({ order_id }) => {
    executed.push(`refund(${JSON.stringify({ order_id })})`);
    return `order ${order_id} refunded`;
  },
});

const model = new OpenAIChatCompletionsModel(client, process.env.REFLECT_MODEL ?? "");
const agent = new Agent({ name: "support", instructions: "You are a support agent. Use the tools to do what the customer asks.", model, tools: [lookupOrder, refund] });

for (const task of ["Look up order 7 and refund it.", "Look up order 8 and refund it."]) {
  steps.length = 0;
  executed.length = 0;
  const result = await run(agent, task, { maxTurns: 6 });
  console.log(`run: ${task}`);
  steps.forEach((r, i) => {
    const failed = r.checks.filter((c) => c.pass === false);
    console.log(`  step ${i + 1}: ${r.attempts} attempt${r.attempts === 1 ? "" : "s"}, ${r.decision}${failed.map((c) => `; attempt ${c.turn} failed ${c.source}: ${c.feedback.replace(/\s+/g, " ")}`).join("")}`);
  });
  for (const call of executed) console.log(`  tool ${call}`);
  console.log(`  final: ${JSON.stringify(result.finalOutput)}`);
}
