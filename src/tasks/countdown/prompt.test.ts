import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { countdownPrompt } from "./prompt.js";

describe("countdownPrompt", () => {
  it("writes the TinyZero-style user prompt", () => {
    assert.deepEqual(countdownPrompt({ nums: [3, 5, 7], target: 22 }), [
      {
        role: "user",
        content:
          "Using the numbers [3, 5, 7], create an equation that equals 22. You can use basic arithmetic operations " +
          "(+, -, *, /) and each number must be used exactly once. Show your work in <think> </think> tags. And return " +
          "the final answer in <answer> </answer> tags, for example <answer> (1 + 2) / 3 </answer>.",
      },
    ]);
  });

  it("says 'at most once' in lenient mode", () => {
    const [message] = countdownPrompt({ nums: [3, 5, 7], target: 22 }, { mode: "lenient" });
    assert.match(message?.content ?? "", /each number can be used at most once\./);
  });
});
