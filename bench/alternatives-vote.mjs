// For an `alternatives` run: how its final answer compares with what the k candidates alone give — the first
// candidate, a majority vote over the candidates' extracted answers (ties to the earliest), and any candidate right
// (the ceiling a perfect chooser reaches). Usage: node bench/alternatives-vote.mjs RUN_DIR
import path from "node:path";
import { readLogIn } from "../dist/record/log.js";

const dir = process.argv[2];
const episodes = (await readLogIn(dir, "episodes", { noun: "episode" })).values;
const count = { first: 0, vote: 0, any: 0, final: 0 };
for (const e of episodes) {
  const panel = e.attempts[0].panel ?? [];
  const answers = panel.map((p) => p.verdict.answer ?? null);
  const tally = new Map();
  for (const a of answers) if (a !== null) tally.set(a, (tally.get(a) ?? 0) + 1);
  const top = Math.max(0, ...tally.values());
  const voted = answers.find((a) => a !== null && tally.get(a) === top);
  count.first += panel[0]?.verdict.correct === true ? 1 : 0;
  count.vote += panel.some((p) => p.verdict.answer === voted && p.verdict.correct === true) ? 1 : 0;
  count.any += panel.some((p) => p.verdict.correct === true) ? 1 : 0;
  count.final += e.attempts.at(-1).verdict.correct === true ? 1 : 0;
}
const n = episodes.length;
console.log(`${n} items, ${episodes[0].attempts[0].panel.length} candidates: first ${count.first}, majority vote ${count.vote}, any right ${count.any}, after the comparison ${count.final}`);
