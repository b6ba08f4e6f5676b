import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bestScores, exactMatch, squadNormalise, tokenF1 } from "./squad.js";

/** [prediction, reference, normalised prediction, normalised reference, exact, F1]: from SQuAD v1.1's evaluate script. */
const official: [string, string, string, string, boolean, number][] = [
  ["The Fisheye lens!", "fisheye", "fisheye lens", "fisheye", false, 0.666667],
  ["because of the cord", "the cord", "because of cord", "cord", false, 0.5],
  ["x x y", "x y y", "x x y", "x y y", false, 0.666667],
  ["Snow Leopard", "snow-leopard", "snow leopard", "snowleopard", false, 0],
  ["President John F. Kennedy's commission", "President John F. Kennedy's Presidential Commission on the Status of Women released its report on gender inequality", "president john f kennedys commission", "president john f kennedys presidential commission on status of women released its report on gender inequality", false, 0.47619],
  ["an apple a day", "apple day", "apple day", "apple day", true, 1],
  ["theatre", "the atre", "theatre", "atre", false, 0],
  ["1964.", "1964", "1964", "1964", true, 1],
  ["non-stick", "nonstick", "nonstick", "nonstick", true, 1],
  ["it’s fine", "its fine", "it’s fine", "its fine", false, 0.5],
];

describe("SQuAD normalisation and scores", () => {
  for (const [prediction, reference, p, r, exact, f1] of official) {
    it(`${JSON.stringify(prediction)} vs ${JSON.stringify(reference).slice(0, 40)}: EM ${exact}, F1 ${f1}`, () => {
      assert.equal(squadNormalise(prediction), p);
      assert.equal(squadNormalise(reference), r);
      assert.equal(exactMatch(prediction, reference), exact);
      assert.ok(Math.abs(tokenF1(prediction, reference) - f1) < 1e-6, String(tokenF1(prediction, reference)));
    });
  }

  it("never lets an empty reply match a reference that normalises to nothing", () => {
    assert.equal(exactMatch("", "a"), false);
    assert.equal(exactMatch("!!", "The"), false);
    assert.equal(exactMatch("the", "The"), true);
    assert.equal(tokenF1("", "a"), 0);
    assert.equal(tokenF1("", "fisheye"), 0);
  });

  it("takes the best over several references", () => {
    assert.deepEqual(bestScores("fisheye lens", ["wide angle", "fisheye"]), { exact: false, f1: 2 / 3 });
    assert.deepEqual(bestScores("the fisheye", ["wide angle", "Fisheye."]), { exact: true, f1: 1 });
  });
});
