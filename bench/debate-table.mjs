// For a `debate` run: each agent's accuracy in each round, how answers moved between rounds (right→wrong,
// wrong→right, per agent), and the final answer (majority vote, ties to the generator) with how it was chosen.
// Usage: node bench/debate-table.mjs RUN_DIR
import path from "node:path";
import { readLogIn } from "../dist/record/log.js";

const dir = process.argv[2];
const episodes = (await readLogIn(dir, "episodes", { noun: "episode" })).values;
const rounds = Math.max(...episodes.map((e) => e.attempts.length));
const agents = episodes[0].attempts[0].panel.map((p) => p.call.model);
const right = (e, r, a) => e.attempts[r]?.panel?.[a]?.verdict.correct === true;
console.log(`${episodes.length} items, agents ${agents.join(" and ")}, ${rounds} rounds`);
console.log("| round | " + agents.map((a) => `${a} right`).join(" | ") + " | final (vote) right | vote rules |");
console.log("|---|" + agents.map(() => "---:|").join("") + "---:|---|");
for (let r = 0; r < rounds; r++) {
  const perAgent = agents.map((_, a) => episodes.filter((e) => right(e, r, a)).length);
  const final = episodes.filter((e) => e.attempts[r]?.verdict.correct === true).length;
  const rules = {};
  for (const e of episodes) {
    const rule = e.attempts[r]?.vote?.rule ?? "none";
    rules[rule] = (rules[rule] ?? 0) + 1;
  }
  console.log(`| ${r + 1} | ${perAgent.join(" | ")} | ${final} | ${Object.entries(rules).map(([k, v]) => `${k} ${v}`).join(", ")} |`);
}
for (let r = 1; r < rounds; r++) {
  for (const [a, agent] of agents.entries()) {
    const lost = episodes.filter((e) => right(e, r - 1, a) && !right(e, r, a)).length;
    const gained = episodes.filter((e) => !right(e, r - 1, a) && right(e, r, a)).length;
    console.log(`round ${r} → ${r + 1}, ${agent}: right→wrong ${lost}, wrong→right ${gained}`);
  }
}
