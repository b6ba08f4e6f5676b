/**
 * A small environment for the `agent` strategy's tests and for the agent run the exports are tested on: a counter
 * brought to a target through `inc`/`dec` over two user turns, the verdict reading the counter. `shout` answers with
 * the text the fixture was given (a hostile observation: injected instructions, control characters, a huge output).
 * Not a test file itself (a `test-*` name would make `node --test dist/` run it as one).
 */
import type { ScriptedReply } from "../models/scripted.js";
import type { EnvironmentSession, EnvironmentTask } from "../tasks/environment.js";
import { unjudgedText } from "../tasks/environment.js";

export interface CounterRecord {
  target: number;
}

export interface CounterTaskOptions {
  /** `act` throws, as a backend whose process died. */
  failAct?: boolean;
  /** What a `shout` call observes. Default: "quiet". */
  shout?: string;
  /** The session reads a reply that is exactly "inc" or "dec" as that call (`actionsIn`), ids `typed_N`. */
  typedActions?: boolean;
}

export type CounterTask = EnvironmentTask<CounterRecord> & { closed: number; opened: number };

export function counterTask(options: CounterTaskOptions = {}): CounterTask {
  const task = {
    name: "counter",
    closed: 0,
    opened: 0,
    defaultSteps: 3,
    prompt: () => [{ role: "user" as const, content: "Bring the counter to the target." }],
    verify: () => unjudgedText("counter"),
    parseRecord: (value: unknown) => value as CounterRecord,
    async environment(record: CounterRecord): Promise<EnvironmentSession> {
      task.opened++;
      let value = 0;
      let userTurn = 1;
      let typed = 0;
      return {
        opening: [{ role: "system", content: "You control a counter." }, { role: "user", content: `Bring the counter to ${record.target}.` }],
        tools: () => [{ name: "inc" }, { name: "dec" }, { name: "shout" }],
        async act(calls) {
          if (options.failAct === true) throw new Error("backend died");
          return calls.map((c) => {
            if (c.name === "inc") value++;
            else if (c.name === "dec") value--;
            else if (c.name === "shout") return { callId: c.id, content: options.shout ?? "quiet", isError: false };
            else return { callId: c.id, content: `unknown tool ${c.name}`, isError: true };
            return { callId: c.id, content: `counter=${value}`, isError: false };
          });
        },
        ...(options.typedActions === true
          ? { actionsIn: (reply: string) => (["inc", "dec"].includes(reply.trim()) ? [{ id: `typed_${typed++}`, name: reply.trim(), arguments: "{}" }] : []) }
          : {}),
        async next() {
          userTurn++;
          return userTurn === 2 ? { role: "user", content: "Now one more step." } : null;
        },
        async verdict() {
          const ok = value === record.target;
          return { correct: ok, answer: String(value), feedback: ok ? "done" : `counter is ${value}, target ${record.target}` };
        },
        async close() {
          task.closed++;
        },
      };
    },
  };
  return task as unknown as CounterTask;
}

/** A scripted reply that calls `name` once, with the call id `id`. */
export const callTool = (name: string, id: string, args = "{}"): ScriptedReply => ({ text: "", toolCalls: [{ id, name, arguments: args }] });
export const inc = (id: string): ScriptedReply => callTool("inc", id);
export const dec = (id: string): ScriptedReply => callTool("dec", id);
