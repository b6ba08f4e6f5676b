import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bbhKind, canonical, normaliseText } from "./kind.js";

describe("bbhKind", () => {
  it("tells the target kinds apart", () => {
    assert.equal(bbhKind("date_understanding", "(B)"), "choice");
    assert.equal(bbhKind("boolean_expressions", "False"), "boolean");
    assert.equal(bbhKind("sports_understanding", "yes"), "yes-no");
    assert.equal(bbhKind("navigate", "No"), "yes-no");
    assert.equal(bbhKind("formal_fallacies", "invalid"), "validity");
    assert.equal(bbhKind("multistep_arithmetic_two", "-50"), "integer");
    assert.equal(bbhKind("dyck_languages", "] )"), "dyck");
    assert.equal(bbhKind("word_sorting", "no"), "words");
    assert.equal(bbhKind("movie_recommendation", "Monsters, Inc"), "text");
  });
});

describe("canonical", () => {
  it("normalises case, whitespace, a trailing period, parentheses", () => {
    assert.equal(canonical("choice", "(b)"), "B");
    assert.equal(canonical("choice", "B"), "B");
    assert.equal(canonical("boolean", "**false.**"), "False");
    assert.equal(canonical("yes-no", "YES"), "Yes");
    assert.equal(canonical("validity", "Invalid."), "invalid");
    assert.equal(canonical("integer", "−1,024.0"), "-1024");
    assert.equal(canonical("integer", "007"), "7");
    assert.equal(canonical("integer", "-0"), "0");
    assert.equal(canonical("integer", "1.5"), null);
    assert.equal(canonical("dyck", "]  )>"), "] ) >");
    assert.equal(canonical("words", "Apple,  banana\ncherry."), "apple banana cherry");
    assert.equal(canonical("text", '  "Dearth,  Wind, & Fire."  '), "dearth, wind, & fire");
    assert.equal(canonical("text", "(a) and (b)"), "(a) and (b)");
    assert.equal(canonical("text", "  "), null);
    assert.equal(normaliseText("((x))."), "x");
  });
});
