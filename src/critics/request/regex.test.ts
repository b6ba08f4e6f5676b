import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RequestFieldError } from "../../errors.js";
import { regexCheck } from "./regex.js";

const run = async (pattern: string, text: string, flags?: string) => await regexCheck(pattern, flags).run({ text });

describe("regexCheck", () => {
  it("passes a reply that matches and fails one that does not, naming the pattern", async () => {
    assert.deepEqual(await run("^\\d{3}-\\d{4}$", "555-1234"), { source: "regex", pass: true, score: 1, feedback: "The reply matches /^\\d{3}-\\d{4}$/." });
    const failed = await run("^\\d{3}-\\d{4}$", "call 555-1234");
    assert.equal(failed.pass, false);
    assert.equal(failed.score, 0);
    assert.match(failed.feedback, /does not match the required pattern \/\^\\d\{3\}-\\d\{4\}\$\//);
  });

  it("honours flags, and answers the same on every call (no lastIndex state)", async () => {
    const check = regexCheck("hello", "i");
    for (let i = 0; i < 3; i++) assert.equal((await check.run({ text: "HELLO there" })).pass, true);
    assert.equal((await run("^b$", "a\nb", "m")).pass, true);
    assert.equal((await run("^b$", "a\nb")).pass, false);
  });

  it("stops a catastrophic pattern within its time limit: cannot judge, with the reason, and the event loop is free again", async () => {
    const hostile = ["(a+)+$", "(a|a)*$", "(a|aa)+$", "^(\\w+\\s?)*$"];
    const texts = ["a".repeat(30) + "b", "a".repeat(30) + "b", "a".repeat(40) + "b", "a".repeat(30) + "!"];
    for (const [i, pattern] of hostile.entries()) {
      const t0 = performance.now();
      const check = await regexCheck(pattern, "", { timeoutMs: 50 }).run({ text: texts[i] as string });
      const ms = performance.now() - t0;
      assert.equal(check.pass, null, pattern);
      assert.match(check.feedback, /took longer than 50 ms and was stopped/);
      assert.ok(ms < 1000, `${pattern} held the loop ${ms} ms`);
    }
    // a timer set before a hostile match fires soon after it, not minutes later
    const fired = new Promise<number>((resolve) => {
      const t0 = performance.now();
      setTimeout(() => resolve(performance.now() - t0), 1);
    });
    await run("(a+)+$", "a".repeat(32) + "b");
    assert.ok((await fired) < 1000);
  });

  it("does not read a reply longer than its limit", async () => {
    const check = await regexCheck("x", "", { maxReplyChars: 1000 }).run({ text: "x".repeat(1001) });
    assert.equal(check.pass, null);
    assert.match(check.feedback, /1001 characters, more than the 1000/);
    assert.equal((await regexCheck("x$").run({ text: "y".repeat(150_000) + "x" })).pass, true);
  });

  it("refuses a pattern or flags that do not compile, g/y, a huge pattern and non-strings, naming reflect.regex", () => {
    const refuses = (fn: () => unknown, words: RegExp) =>
      assert.throws(fn, (error: unknown) => error instanceof RequestFieldError && error.field === "reflect.regex" && words.test(error.message));
    refuses(() => regexCheck("(unclosed"), /does not compile: Invalid regular expression/);
    refuses(() => regexCheck("a", "q"), /flag "q" not allowed/);
    refuses(() => regexCheck("a", "g"), /flag "g" not allowed/);
    refuses(() => regexCheck("a", "iy"), /flag "y" not allowed/);
    refuses(() => regexCheck("a", "ii"), /does not compile/);
    refuses(() => regexCheck("a".repeat(5000)), /5000 characters; at most 4096/);
    refuses(() => regexCheck(42 as unknown as string), /must be a string, not number/);
    refuses(() => regexCheck("a", null as unknown as string), /flags must be a string/);
  });
});

describe("regexCheck's vacuity", () => {
  it("marks a pattern that matches the empty reply as vacuous, naming it, and leaves one that does not unmarked", () => {
    for (const pattern of ["^", "", ".*", "\\d*", "x?", "a|", "^$", "(?:)"]) assert.match(regexCheck(pattern).vacuous ?? "", /matches the empty reply/, pattern);
    for (const pattern of ["^\\d+$", ".", "x", "[^]"]) assert.equal(regexCheck(pattern).vacuous, undefined, pattern);
    assert.equal(regexCheck("^A$", "i").vacuous, undefined);
  });
});
