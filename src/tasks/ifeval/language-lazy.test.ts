import assert from "node:assert/strict";
import { describe, it } from "node:test";
import "../../index.js";
import { detectLanguage, ifevalFamily, languageDetectorLoaded, parseIfevalRecord, verifyIfeval } from "./index.js";

// A process of its own: nothing here has loaded the language identifier before these run.
describe("the language identifier loads when IFEval first needs it", () => {
  const record = parseIfevalRecord({ key: 1, prompt: "Answer in Italian.", instruction_id_list: ["language:response_language"], kwargs: [{ language: "it" }] });

  it("is not loaded by importing reflectkit, and a direct call before loading says what to await", () => {
    assert.equal(languageDetectorLoaded(), false);
    assert.throws(() => detectLanguage("Ciao, come stai?"), /await loadLanguageDetector\(\)/);
    assert.throws(() => verifyIfeval(record, "Ciao"), /await loadLanguageDetector\(\) first/);
  });

  it("the task's verify loads it on the first call, then answers synchronously", async () => {
    const task = ifevalFamily.create({});
    const first = task.verify(record, "Questa è una risposta scritta interamente in italiano, come chiesto dalla domanda.");
    assert.ok(first instanceof Promise);
    assert.equal((await first).correct, true);
    assert.equal(languageDetectorLoaded(), true);
    const second = task.verify(record, "This reply is written in English, which is not what the prompt asked for.");
    assert.ok(!(second instanceof Promise));
    assert.equal((second as { correct: boolean }).correct, false);
  });
});
