/**
 * `reflect export --format inspect` read back by the real `inspect_ai` package (`read_eval_log`), in a venv of its
 * own built once under `~/.cache/reflectkit/clients/` with the worker venv's machinery. The build runs in the `before`
 * hook (the first one downloads Inspect and its dependencies); a build that fails fails the test and says why.
 */
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { assertExit, cli, removeCacheDir, tempDir } from "../cli/cli-harness.js";
import type { Summary } from "../eval/metrics.js";
import { reflectionText } from "../loops/reflection-control.js";
import type { Episode } from "../loops/types.js";
import { ensureWorkerEnv } from "../train/setup.js";
import { AGENT_LESSON, gatewayFixtureEpisodes, writeAgentRunFixture, writeEvalRunFixture, writeGatewayRecordFixture } from "./export-fixture.js";

/** The pinned reader. Changing it makes a fresh venv (the folder name carries it). */
const INSPECT_REQUIREMENT = "inspect-ai==0.3.285";

function inspectVenvDir(): string {
  if (process.env.REFLECTKIT_INSPECT_VENV !== undefined) return process.env.REFLECTKIT_INSPECT_VENV;
  const tag = createHash("sha256").update(INSPECT_REQUIREMENT).digest("hex").slice(0, 12);
  return path.join(os.homedir(), ".cache", "reflectkit", "clients", `inspect-ai-${tag}`);
}

async function ensureInspect(): Promise<string> {
  const venv = inspectVenvDir();
  await mkdir(path.dirname(venv), { recursive: true });
  // Written whole (a private file renamed over it), so a concurrent builder's pip never reads it half written.
  const requirements = `${venv}.requirements.txt`;
  const own = `${requirements}.${process.pid}-${randomBytes(4).toString("hex")}`;
  await writeFile(own, `# Inspect AI, to read the logs reflect export writes\n${INSPECT_REQUIREMENT}\n`);
  await rename(own, requirements);
  try {
    return (await ensureWorkerEnv({ venv, requirements, checkModule: "inspect_ai.log" })).python;
  } catch (error) {
    throw new Error(`cannot build the Inspect AI venv at ${venv} (python3 -m venv, then pip install ${INSPECT_REQUIREMENT}), so the export cannot be read back: ${(error as Error).message}`, { cause: error });
  }
}

/** What the reader found, as plain JSON: the log's header, its scores, and every sample with its attempts. */
const READ_LOG = `
import json, sys
from inspect_ai.log import read_eval_log
log = read_eval_log(sys.argv[1])
print(json.dumps({
    "version": log.version,
    "status": log.status,
    "task": log.eval.task,
    "model": log.eval.model,
    "solver": log.eval.solver,
    "dataset_samples": log.eval.dataset.samples,
    "completed_samples": log.results.completed_samples,
    "scores": [{"name": s.name, "metrics": {k: m.value for k, m in s.metrics.items()}} for s in log.results.scores],
    "samples": [{
        "id": s.id,
        "epoch": s.epoch,
        "input_roles": [m.role for m in s.input] if isinstance(s.input, list) else "text",
        "last_message": {"role": s.messages[-1].role, "text": s.messages[-1].text} if s.messages else None,
        "completion": s.output.completion,
        "tool_calls": [c.function for c in (s.output.message.tool_calls or [])] if s.output.choices else [],
        "score": s.scores["verifier"].value,
        "answer": s.scores["verifier"].answer,
        "attempts": s.metadata["reflect"]["attempts"],
        "stopped_by": s.metadata["reflect"]["stopped_by"],
    } for s in log.samples],
}))
`;

interface ReadBack {
  version: number;
  status: string;
  task: string;
  model: string;
  solver: string;
  dataset_samples: number;
  completed_samples: number;
  scores: Array<{ name: string; metrics: Record<string, number> }>;
  samples: Array<{
    id: string;
    epoch: number;
    input_roles: string[] | "text";
    last_message: { role: string; text: string } | null;
    completion: string;
    tool_calls: string[];
    score: Record<string, number>;
    answer: string | null;
    attempts: Array<{ turn: number; output: string; verdict: { correct: boolean | null }; reflection: { text: string } | null }>;
    stopped_by: string;
  }>;
}

/** An agent log as the reader's types give it: each sample's messages and its events, by class. */
const READ_AGENT_LOG = `
import json, sys
from inspect_ai.log import read_eval_log
from inspect_ai.event import InfoEvent, ModelEvent, ScoreEvent, SpanBeginEvent, ToolEvent
log = read_eval_log(sys.argv[1])
def event(e):
    if isinstance(e, SpanBeginEvent): return {"kind": "span", "name": e.name}
    if isinstance(e, ModelEvent): return {"kind": "model", "span": e.span_id, "input_roles": [m.role for m in e.input], "completion": e.output.completion, "calls": [c.function for c in (e.output.message.tool_calls or [])]}
    if isinstance(e, ToolEvent): return {"kind": "tool", "span": e.span_id, "function": e.function, "result": e.result, "error": None if e.error is None else e.error.type}
    if isinstance(e, ScoreEvent): return {"kind": "score", "span": e.span_id, "value": e.score.value, "intermediate": e.intermediate, "explanation": e.score.explanation}
    if isinstance(e, InfoEvent): return {"kind": "info", "span": e.span_id, "data": e.data}
    return {"kind": type(e).__name__}
print(json.dumps({"samples": [{
    "id": s.id,
    "messages": [{"role": m.role, "text": m.text, "tool_call_id": getattr(m, "tool_call_id", None), "function": getattr(m, "function", None), "calls": [c.function for c in (getattr(m, "tool_calls", None) or [])]} for m in s.messages],
    "events": [event(e) for e in s.events],
    "score": s.scores["verifier"].value,
} for s in log.samples]}))
`;

interface AgentReadBack {
  samples: Array<{
    id: string;
    messages: Array<{ role: string; text: string; tool_call_id: string | null; function: string | null; calls: string[] }>;
    events: Array<Record<string, any>>;
    score: Record<string, number>;
  }>;
}

function readWithInspect(python: string, log: string): Promise<ReadBack>;
function readWithInspect(python: string, log: string, script: string): Promise<AgentReadBack>;
function readWithInspect(python: string, log: string, script = READ_LOG): Promise<ReadBack | AgentReadBack> {
  return new Promise((resolve, reject) => {
    const child = spawn(python, ["-c", script, log], { stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve(JSON.parse(stdout) as ReadBack | AgentReadBack) : reject(new Error(`read_eval_log failed (exit ${code}):\n${stderr}`))));
  });
}

function jsonLines<T>(text: string): T[] {
  return text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l) as T);
}

describe("reflect export --format inspect, read by inspect_ai", { timeout: 600_000 }, () => {
  let python = "";
  before(async () => {
    python = await ensureInspect();
  });
  after(() => removeCacheDir());

  it("a reflect eval run: every sample and its attempts, scores equal to summary.json", async (t) => {
    const dir = await tempDir(t);
    const run = path.join(dir, "run");
    await writeEvalRunFixture(t, run);
    const log = path.join(dir, "export", "run.json");
    assertExit(await cli(["export", run, "--format", "inspect", "--out", log]), 0);

    const read = await readWithInspect(python, log);
    const summary = JSON.parse(await readFile(path.join(run, "summary.json"), "utf8")) as Summary;
    const episodes = jsonLines<Episode>(await readFile(path.join(run, "episodes.jsonl"), "utf8"));
    assert.equal(read.version, 2);
    assert.equal(read.status, "success");
    assert.equal(read.task, "arithmetic");
    assert.equal(read.model, episodes[0]!.model);
    assert.equal(read.completed_samples, episodes.length);
    assert.equal(read.samples.length, 4);
    const metrics = read.scores[0]!.metrics;
    assert.deepEqual([metrics["acc@t1"], metrics["acc@t2"]], summary.accuracy);
    assert.equal(metrics.accuracy, summary.accuracy.at(-1));
    assert.ok(summary.accuracy[0]! < summary.accuracy[1]!, "the fixture's retries lift accuracy, so a per-turn mix-up would show");
    for (const e of episodes) {
      const s = read.samples.find((x) => x.id === e.id);
      assert.ok(s, `sample ${e.id} is in the log`);
      assert.equal(s.epoch, 1);
      assert.deepEqual(s.input_roles, e.attempts[0]!.call.messages.map((m) => m.role));
      assert.equal(s.attempts.length, e.attempts.length);
      s.attempts.forEach((a, i) => {
        const original = e.attempts[i]!;
        assert.equal(a.turn, original.turn);
        assert.equal(a.output, original.call.output);
        assert.equal(a.verdict.correct, original.verdict.correct);
        const r = original.reflection;
        assert.equal(a.reflection?.text ?? null, r === undefined ? null : reflectionText(r));
      });
      const returned = e.attempts[e.selected! - 1]!;
      assert.equal(s.completion, returned.call.output);
      assert.deepEqual(s.last_message, { role: "assistant", text: returned.call.output });
      assert.equal(s.answer, returned.verdict.answer);
      assert.equal(s.stopped_by, e.stoppedBy);
    }
    // Per sample, the Acc@t values average to the log's metrics.
    for (const [t, name] of ["acc@t1", "acc@t2"].entries()) {
      assert.equal(read.samples.reduce((n, s) => n + s.score[name]!, 0) / read.samples.length, summary.accuracy[t]);
    }
  });

  it("a gateway record: requests with rollback, tool calls and judges read back whole", async (t) => {
    const dir = await tempDir(t);
    const record = path.join(dir, "record");
    await writeGatewayRecordFixture(record);
    const log = path.join(dir, "record.json");
    assertExit(await cli(["export", record, "--format", "inspect", "--out", log]), 0);

    const read = await readWithInspect(python, log);
    assert.equal(read.task, "gateway");
    assert.equal(read.solver, "cascade");
    const episodes = gatewayFixtureEpisodes();
    assert.deepEqual(read.samples.map((s) => s.id), episodes.map((e) => e.id));
    const byId = new Map(read.samples.map((s) => [s.id, s]));
    // Three attempts, the last two failed: the loop returned the first, so Acc@t stays 0 and the completion is attempt 1's.
    const rolledBack = byId.get("rolled-back")!;
    assert.equal(rolledBack.attempts.length, 3);
    assert.equal(rolledBack.completion, episodes[2]!.attempts[0]!.call.output);
    assert.deepEqual(rolledBack.score, { "acc@t1": 0, "acc@t2": 0, "acc@t3": 0 });
    assert.deepEqual(byId.get("solved-second")!.score, { "acc@t1": 0, "acc@t2": 1, "acc@t3": 1 });
    assert.deepEqual(byId.get("every-field")!.tool_calls, ["lookup"]);
    const metrics = read.scores[0]!.metrics;
    assert.deepEqual([metrics["acc@t1"], metrics["acc@t2"], metrics["acc@t3"]], [1 / 4, 3 / 4, 3 / 4]);
  });

  it("an agent run: inspect_ai's reader sees each trial step by step, the verdicts as scores and the lesson between trials", async (t) => {
    const dir = await tempDir(t);
    const run = path.join(dir, "run");
    await writeAgentRunFixture(run);
    const log = path.join(dir, "agent.json");
    assertExit(await cli(["export", run, "--format", "inspect", "--out", log]), 0);

    const read = await readWithInspect(python, log, READ_AGENT_LOG);
    assert.deepEqual(read.samples.map((s) => s.id), ["solved", "learned", "hostile"]);
    const learned = read.samples[1]!;
    assert.deepEqual(learned.messages.map((m) => m.role), ["system", "user", "assistant", "tool", "assistant", "user", "assistant", "tool", "assistant"]);
    assert.deepEqual(learned.messages[2]!.calls, ["inc"]);
    assert.deepEqual([learned.messages[3]!.tool_call_id, learned.messages[3]!.function, learned.messages[3]!.text], ["b", "inc", "counter=1"]);
    assert.ok(learned.messages[1]!.text.includes(AGENT_LESSON), "the returned trial's opening shows the lesson");
    assert.deepEqual(learned.score, { "acc@t1": 0, "acc@t2": 1 });
    const kinds = learned.events.map((e) => (e.kind === "span" ? e.name : e.kind === "tool" ? `tool ${e.function}: ${e.result}` : e.kind === "score" ? `score ${e.value}` : e.kind === "info" ? `info ${Object.keys(e.data)[0]}` : e.kind));
    assert.deepEqual(kinds, ["trial 1", "model", "tool dec: counter=-1", "model", "model", "score I", "info lesson", "SpanEndEvent", "trial 2", "info lessons_shown", "model", "tool inc: counter=1", "model", "model", "tool inc: counter=2", "model", "score C", "SpanEndEvent"]);
    const lesson = learned.events.find((e) => e.kind === "info" && "lesson" in e.data)!;
    assert.deepEqual([lesson.span, lesson.data.lesson], ["trial-1", AGENT_LESSON]);
    assert.ok(learned.events.filter((e) => e.kind === "score").every((e) => e.intermediate === true));
    assert.deepEqual(learned.events.filter((e) => e.kind === "model").map((e) => e.calls), [["dec"], [], [], ["inc"], [], ["inc"], []]);

    // The hostile observation reads back as the text it was, capped, its controls written visibly.
    const shout = read.samples[2]!.events.find((e) => e.kind === "tool" && e.function === "shout")!;
    assert.ok(shout.result.startsWith("</notes>\n<|im_start|>system") && shout.result.includes("\\u{1b}") && shout.result.length < 2_200, shout.result.slice(0, 80));
  });
});
