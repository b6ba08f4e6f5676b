/**
 * Run folders for the theatre tests (unit and browser). `writeConfidenceRun` copies a committed run of the embedded
 * SmolLM2 (fixtures/runs/reflect-retry, written before answer confidence existed) and gives every attempt a
 * made-up confidence — right answers near 0.85, wrong ones rising from 0.45 by 0.1 a turn, with seeded jitter — so the
 * chart has something to draw. These are test values, not measurements. Not a test file itself (a `test-*` name would
 * make `node --test dist/` run it as one).
 */
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Episode } from "../loops/types.js";
import { readLogIn } from "../record/log.js";
import { mulberry32 } from "../util/random.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
export const OLD_RUN = path.join(REPO, "src/report/fixtures/runs/reflect-retry");
export const JUDGE_RUN = path.join(REPO, "src/report/fixtures/runs/self-refine-judge");

/** Writes the copy with made-up confidence into `dir`; returns its episodes. */
export async function writeConfidenceRun(dir: string): Promise<Episode[]> {
  await mkdir(dir, { recursive: true });
  await copyFile(path.join(OLD_RUN, "config.json"), path.join(dir, "config.json"));
  const random = mulberry32(17);
  const { values: episodes } = await readLogIn<Episode>(OLD_RUN, "episodes", { noun: "episode" });
  for (const episode of episodes) {
    for (const [i, attempt] of episode.attempts.entries()) {
      if (attempt.verdict.answer === null) {
        attempt.confidence = { available: false, reason: "no-answer" };
        continue;
      }
      const prob = Math.min(0.99, Math.max(0.01, (attempt.verdict.correct === true ? 0.85 : 0.45 + 0.1 * i) + 0.2 * (random() - 0.5)));
      attempt.confidence = { available: true, prob, meanLogprob: Math.log(prob) / 2, tokens: 2 };
    }
  }
  await writeFile(path.join(dir, "episodes.jsonl"), episodes.map((e) => `${JSON.stringify(e)}\n`).join(""));
  return episodes;
}
