import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { before, describe, it } from "node:test";
import { shellCommand } from "./card.js";
import { curateReflectionData } from "./curate.js";
import { exportReflectionData } from "./export.js";
import { failedItem, fixtureItem, QUICK, STEP, writeGenerationFolder } from "./fixture.js";

const tmp = () => mkdtempSync(path.join(os.tmpdir(), "reflectkit-card-"));
const own = [{ id: "mine/units", text: "Check the units | of every number." }];
let curated: string;
let gen: string;

before(async () => {
  gen = tmp();
  const item = fixtureItem(
    failedItem("q1", "What is 2 + 3?", "Thought: two and three. <answer>4</answer>", [
      [STEP, "I added wrong; redo it.", "Thought: again. <answer>5</answer>", true],
      [QUICK, "Guess.", "<answer>7</answer>", false],
      ["mine/units", "Units are fine.", "<answer>5</answer>", true],
    ]),
    own,
  );
  await writeGenerationFolder(gen, [item], own);
  curated = tmp();
  await curateReflectionData({ inDir: gen, outDir: curated, testShare: 0, config: { argv: ["data", "curate", "--in", gen, "--out", curated] } });
});

describe("the dataset card", () => {
  it("README.md beside a lone export; <file>.README.md for each once the folder holds several; a user's README.md is left alone", async () => {
    const dir = tmp();
    const first = await exportReflectionData({ inDir: curated, set: "d_plus", format: "trl-sft", outFile: path.join(dir, "sft.jsonl") });
    assert.equal(first.card, path.join(dir, "README.md"));
    const second = await exportReflectionData({ inDir: curated, set: "d_pm", format: "trl-dpo", outFile: path.join(dir, "dpo.jsonl") });
    assert.equal(second.card, path.join(dir, "dpo.jsonl.README.md"));
    assert.deepEqual(readdirSync(dir).sort(), ["dpo.jsonl", "dpo.jsonl.README.md", "sft.jsonl", "sft.jsonl.README.md"], "the lone export's README.md moved to its own name");
    assert.match(readFileSync(path.join(dir, "sft.jsonl.README.md"), "utf8"), /^<!-- reflectkit dataset card for: sft\.jsonl -->\n# sft\.jsonl\n/);
    const again = await exportReflectionData({ inDir: curated, set: "d_plus", format: "trl-sft", setting: "two-stage-reflection", outFile: path.join(dir, "sft.jsonl") });
    assert.equal(again.card, path.join(dir, "sft.jsonl.README.md"));
    assert.match(readFileSync(again.card, "utf8"), /setting \*\*two-stage-reflection\*\*/);

    const mine = tmp();
    writeFileSync(path.join(mine, "README.md"), "# my project\n");
    const beside = await exportReflectionData({ inDir: curated, set: "distill", format: "parquet", outFile: path.join(mine, "distill.parquet") });
    assert.equal(beside.card, path.join(mine, "distill.parquet.README.md"));
    assert.equal(readFileSync(path.join(mine, "README.md"), "utf8"), "# my project\n");
    assert.ok(!existsSync(path.join(mine, "distill.parquet.partial")));
  });

  it("holds Table 1's statistics, the counts, the instructions with their texts, their efficacy, the model and the three commands", async () => {
    const outFile = path.join(tmp(), "train.jsonl");
    const { card } = await exportReflectionData({ inDir: curated, set: "d_plus", format: "openai-sft", setting: "two-stage-correction", outFile });
    const text = readFileSync(card, "utf8");
    assert.ok(text.includes("| task | reflection samples | Q&A-reflection samples (D+) | % correct after reflection | avg words: question | first answer | second answer | reflection |"));
    // Over the 3 retried samples: the question "What is 2 + 3?" (5 words), the first answer (5), the second answers
    // (3, 1, 1 words) and the reflections (5, 1, 3).
    assert.ok(text.includes("| arithmetic | 3 | 2 | 66.7% | 5.0 | 5.0 | 1.7 | 3.0 |"), text);
    assert.ok(text.includes("averages in words (whitespace-separated)"));
    assert.ok(text.includes("| d_plus | 2 | 0 |"));
    assert.ok(text.includes("No judge: D_pref was not made."));
    assert.ok(text.includes("| `mine/units` | Check the units \\| of every number. |"), "the own instruction, its pipe escaped");
    assert.ok(text.includes(`| \`${STEP}\` | Go through your previous solution step by step`));
    assert.ok(text.includes("| `mine/units` | 1 / 1 | 100.0% | 20.7% – 100.0% |"));
    assert.ok(text.indexOf(`| \`${QUICK}\` | 0 / 1 | 0.0%`) > text.indexOf("| `mine/units` | 1 / 1"), "best first");
    assert.ok(text.includes("Generator: `scripted` (`--model scripted`)"));
    assert.ok(text.includes(`reflect data generate --task arithmetic --model scripted --out ${gen}`));
    assert.ok(text.includes(`reflect data curate --in ${gen} --out ${curated}`));
    assert.ok(text.includes(`reflect data export --in ${curated} --set d_plus --format openai-sft --setting two-stage-correction --split train --out ${outFile}`));
    assert.ok(text.includes('"instructions_per_item": 2'), "the generation's config.json");
    assert.ok(text.includes("stage 2 of ReflectEvo's two-stage SFT"));
  });

  it("quotes command words for a POSIX shell", () => {
    assert.equal(shellCommand(["reflect", "--out", "/tmp/a b", "it's", "x=1"]), "reflect --out '/tmp/a b' 'it'\\''s' x=1");
  });
});
