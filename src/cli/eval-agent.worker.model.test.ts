/**
 * `reflect eval --strategy agent` from the command line on a real embedded model and the real environments (BFCL
 * multi-turn's backends and checker, a TextWorldExpress game in its JVM): trials with their trajectories in the record,
 * one span per step under its trial, a lesson in the SQLite memory after a failed trial, and a rerun that resumes.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { before, describe, it } from "node:test";
import Database from "better-sqlite3";
import { resolveRegisteredModel } from "../models/resolve.js";
import { ensureBfclPackage } from "../tasks/bfcl-multi-turn/index.js";
import { ensureTextworldExpressPackage } from "../tasks/textworld-express/index.js";

const run = promisify(execFile);
const BIN = path.resolve(import.meta.dirname, "..", "..", "bin", "reflect.js");

/** The test runner's own variable would make the CLI act as a test file. */
function childEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

const lines = (file: string) => readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);

interface Step {
  output: string;
  toolCalls: { name: string }[];
  observations: { content: string }[];
}
interface Attempt {
  verdict: { correct: boolean | null; feedback?: string };
  trajectory: Step[];
  reflection?: { call: { output: string } };
}

const runs = [
  { name: "BFCL multi-turn, the first user turn of a base entry", task: "bfcl-multi-turn", data: "base@1", id: "multi_turn_base_0", steps: "2" },
  { name: "TextWorldExpress, a coin game", task: "textworld-express", data: "coin", id: "coin-20000", steps: "4" },
];

describe("reflect eval --strategy agent on a real model and real environments", { timeout: 1_200_000 }, () => {
  before(async () => {
    await Promise.all([resolveRegisteredModel("smollm2-135m"), ensureBfclPackage(), ensureTextworldExpressPackage()]);
  });

  for (const { name, task, data, id, steps: perTurn } of runs) {
    it(`SmolLM2 on ${name}: trials, trajectories, step spans, a lesson, resume`, async () => {
      const out = path.join(mkdtempSync(path.join(os.tmpdir(), "reflectkit-agent-model-")), "run");
      const args = [BIN, "eval", "--task", task, "--data", data, "--limit", "1", "--strategy", "agent", "--turns", "2", "--steps", perTurn];
      args.push("--model", "smollm2-135m", "--max-tokens", "96", "--reflection-max-tokens", "48", "--threads", "2", "--context-size", "8192", "--out", out, "--json");
      const { stdout } = await run(process.execPath, args, { timeout: 900_000, env: childEnv() });
      const summary = JSON.parse(stdout) as { n: number };
      assert.equal(summary.n, 1);
      const [episode] = lines(path.join(out, "episodes.jsonl")) as { id: string; strategy: string; attempts: Attempt[]; correct: boolean; stoppedBy: string; error?: unknown }[];
      assert.ok(episode !== undefined);
      // BFCL's tools and a lesson fill more than 4,096 tokens of SmolLM2's context: the run asks for 8,192.
      assert.notEqual(episode.stoppedBy, "error", JSON.stringify(episode.error));
      assert.equal(episode.id, id);
      assert.equal(episode.strategy, "agent");
      const trials = episode.attempts;
      assert.ok(trials.length >= 1 && trials.length <= 2, `${trials.length} trials`);
      for (const trial of trials) {
        assert.ok(trial.trajectory.length >= 1 && trial.trajectory.length <= Number(perTurn) * 4, `${trial.trajectory.length} steps`);
        assert.equal(typeof trial.verdict.correct, "boolean", "the environment judged the trial");
        assert.ok((trial.verdict.feedback ?? "") !== "", "the environment's check says why");
        for (const step of trial.trajectory) assert.equal(step.observations.length, step.toolCalls.length, "every call has its observation");
      }
      // Spans: one per step under its trial.
      const spans = lines(path.join(out, "traces.jsonl")) as { name: string; spanId: string; parentSpanId?: string }[];
      const trialSpans = spans.filter((s) => /^attempt \d+$/.test(s.name));
      assert.equal(trialSpans.length, trials.length);
      const steps = spans.filter((s) => /^step \d+$/.test(s.name));
      assert.equal(steps.length, trials.reduce((n, t) => n + t.trajectory.length, 0), `step spans: ${spans.map((s) => s.name).join(", ")}`);
      for (const step of steps) assert.ok(trialSpans.some((t) => t.spanId === step.parentSpanId), `${step.name} nests under a trial`);
      // A failed first trial leaves a lesson in the run's memory, shown to the second.
      if (trials[0]?.verdict.correct === false && (trials[0].reflection?.call.output ?? "").trim() !== "") {
        const db = new Database(path.join(out, "memory.sqlite"), { readonly: true });
        try {
          const { n } = db.prepare("SELECT count(*) AS n FROM lessons").get() as { n: number };
          assert.ok(n >= 1, "the lesson is stored");
        } finally {
          db.close();
        }
      }
      // The same command again resumes: nothing is run twice.
      const again = await run(process.execPath, args.filter((a) => a !== "--json"), { timeout: 300_000, env: childEnv() });
      assert.match(again.stdout, /1 episodes resumed from disk/);
      assert.equal(lines(path.join(out, "episodes.jsonl")).length, 1);
    });
  }
});
