import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { InputError } from "../../errors.js";
import { bfclFamily, bfclTask, loadBfcl } from "./index.js";

const fn = { name: "spotify.play", description: "Play an artist.", parameters: { type: "dict", properties: { artist: { type: "string" }, duration: { type: "integer" } }, required: ["artist", "duration"] } };
const question = (id: string, content: string) => ({ id, question: [[{ role: "user", content }]], function: [fn] });
const answer = (id: string, artist: string) => ({ id, ground_truth: [{ "spotify.play": { artist: [artist], duration: [20] } }] });
const lines = (...values: unknown[]) => values.map((value) => JSON.stringify(value)).join("\n");

/** `expected` is the message after `<file>:<line>: `. */
function rejectsAt(file: string, line: number, expected: RegExp) {
  return (error: unknown) => {
    assert.ok(error instanceof InputError, String(error));
    assert.equal(error.path, file);
    assert.equal(error.line, line);
    assert.ok(error.message.startsWith(`${file}:${line}: `), error.message);
    assert.match(error.message.slice(`${file}:${line}: `.length), expected);
    return true;
  };
}

describe("loadBfcl", () => {
  const dir = mkdtempSync(join(tmpdir(), "reflectkit-bfcl-"));
  after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, "possible_answer"));

  it("joins a question file with possible_answer/<same name> by id, in the question file's order", async () => {
    const file = join(dir, "BFCL_fixture_simple.jsonl");
    writeFileSync(file, lines(question("simple_0", "Play Taylor Swift for 20 minutes."), question("simple_1", "Play Maroon 5 for 20 minutes.")) + "\n\n");
    writeFileSync(join(dir, "possible_answer", "BFCL_fixture_simple.jsonl"), lines(answer("simple_1", "Maroon 5"), answer("simple_0", "Taylor Swift")));
    const items = await loadBfcl(file);
    assert.deepEqual(
      items.map((item) => [item.id, item.record.ground_truth]),
      [
        ["simple_0", [{ "spotify.play": { artist: ["Taylor Swift"], duration: [20] } }]],
        ["simple_1", [{ "spotify.play": { artist: ["Maroon 5"], duration: [20] } }]],
      ],
    );
    const verdict = bfclTask().verify(items[1]!.record, "<answer>[spotify.play(artist='maroon 5', duration=20)]</answer>");
    assert.equal(verdict.correct, true, verdict.feedback);
    assert.deepEqual(await bfclFamily.load(file, bfclFamily.create({})), items);
  });

  it("reads BFCL's .json files, which are JSON Lines", async () => {
    const file = join(dir, "BFCL_fixture_parallel.json");
    writeFileSync(file, lines(question("parallel_0", "Play Taylor Swift."), question("parallel_1", "Play Maroon 5.")));
    writeFileSync(join(dir, "possible_answer", "BFCL_fixture_parallel.json"), lines(answer("parallel_0", "Taylor Swift"), answer("parallel_1", "Maroon 5")));
    assert.deepEqual((await loadBfcl(file)).map((item) => item.id), ["parallel_0", "parallel_1"]);
  });

  it("takes records that carry ground_truth, and xLAM records, without an answer file; ids fall back to <file>:<line>", async () => {
    const file = join(dir, "joined.jsonl");
    const xlam = { query: "Play Adele for 20 minutes.", tools: JSON.stringify([{ name: "spotify.play", description: "Play.", parameters: { artist: { type: "str", description: "Artist." }, duration: { type: "int", description: "Minutes." } } }]), answers: JSON.stringify([{ name: "spotify.play", arguments: { artist: "Adele", duration: 20 } }]) };
    writeFileSync(file, lines({ ...question("a", "Play Adele."), ground_truth: answer("a", "Adele").ground_truth }, xlam));
    const items = await loadBfcl(file);
    assert.deepEqual(items.map((item) => item.id), ["a", "joined.jsonl:2"]);
    assert.deepEqual(items[1]?.record.ground_truth, [{ "spotify.play": { artist: ["Adele"], duration: [20] } }]);
    assert.equal(bfclTask().verify(items[1]!.record, '<answer>{"name": "spotify.play", "arguments": {"artist": "adele", "duration": 20}}</answer>').correct, true);
  });

  it("gives irrelevance files, which have no answer file, no expected call", async () => {
    const file = join(dir, "BFCL_fixture_irrelevance.jsonl");
    writeFileSync(file, lines(question("irrelevance_0", "What is the capital of France?")));
    const [item] = await loadBfcl(file);
    assert.deepEqual(item?.record.ground_truth, []);
    assert.equal(bfclTask().verify(item!.record, "<answer>[]</answer>").correct, true);
  });

  it("names the file and line of a malformed line, a bad record or a missing answer", async () => {
    const file = join(dir, "BFCL_fixture_bad.jsonl");
    const answers = join(dir, "possible_answer", "BFCL_fixture_bad.jsonl");
    writeFileSync(answers, lines(answer("bad_0", "Adele"), answer("bad_1", "Adele")));

    writeFileSync(file, `${JSON.stringify(question("bad_0", "q"))}\n\n{"id": "bad_1", "question": [[{"role": "user", "content": "q"}]], "function": [}\n`);
    await assert.rejects(loadBfcl(file), rejectsAt(file, 3, /^not valid JSON \(/));

    writeFileSync(file, lines(question("bad_0", "q"), { ...question("bad_1", "q"), function: [{ description: "no name" }] }));
    await assert.rejects(loadBfcl(file), rejectsAt(file, 2, /^function\[0\] has no "name" string$/));

    writeFileSync(file, lines(question("bad_0", "q"), question("bad_9", "q")));
    await assert.rejects(loadBfcl(file), rejectsAt(file, 2, new RegExp(`^no possible answer with id "bad_9" in ${answers.replace(/[.\\]/gu, "\\$&")}$`)));

    writeFileSync(file, lines(question("bad_0", "q")));
    writeFileSync(answers, `${JSON.stringify(answer("bad_0", "Adele"))}\n{"id": "bad_1", "ground_truth": [`);
    await assert.rejects(loadBfcl(file), rejectsAt(answers, 2, /^not valid JSON \(/));

    writeFileSync(answers, lines(answer("bad_0", "Adele"), answer("bad_0", "Adele")));
    await assert.rejects(loadBfcl(file), rejectsAt(answers, 2, /^a second possible answer with id "bad_0"$/));

    writeFileSync(answers, lines({ id: "bad_0", ground_truth: { "spotify.play": {} } }));
    await assert.rejects(loadBfcl(file), rejectsAt(answers, 1, /^field "ground_truth" must be a list of expected calls$/));
  });

  it("says where the answers should be when there are none", async () => {
    const file = join(dir, "BFCL_fixture_lonely.jsonl");
    writeFileSync(file, lines(question("lonely_0", "q")));
    await assert.rejects(loadBfcl(file), rejectsAt(file, 1, /^the records have no "ground_truth" and there is no possible-answer file at .*possible_answer[/\\]BFCL_fixture_lonely\.jsonl — BFCL keeps the answers in possible_answer\/<same file name>/));
    const answerOnly = join(dir, "possible_answer", "BFCL_fixture_simple.jsonl");
    await assert.rejects(loadBfcl(answerOnly), rejectsAt(answerOnly, 1, /^this is a possible-answer record .*: pass the question file/));
  });
});
