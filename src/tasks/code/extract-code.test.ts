import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { extractCode, looksLikeCode } from "./extract-code.js";

describe("extractCode", () => {
  it("takes the last python fence, then the last plain fence, then the answer block, then a reply that is code", () => {
    const cases: Array<[string, string, string]> = [
      ["Try:\n```python\ndef f(): return 1\n```\nBetter:\n```python\ndef f(): return 2\n```\nDone.", "def f(): return 2", "python-fence"],
      ["```py\nx = 1\n```\n```text\noutput\n```", "x = 1", "python-fence"],
      ["```Python3\nx = 1\n```", "x = 1", "python-fence"],
      ["```\ndef f(): pass\n```", "def f(): pass", "fence"],
      ["```python\ndef f(): return 1\n```\n```\nplain\n```", "def f(): return 1", "python-fence"],
      ["```bash\nls\n```\n<answer>\ny = 2\n</answer>", "y = 2", "answer-block"],
      ["<answer>\n```python\ny = 2\n```\n</answer>", "y = 2", "python-fence"],
      ["<answer>def f():\n    return 3</answer>", "def f():\n    return 3", "answer-block"],
      ["def f(x):\r\n    return x\r\n", "def f(x):\n    return x", "whole-reply"],
      ["    a, b = 1, 2\n    return a + b", "a, b = 1, 2\nreturn a + b", "whole-reply"],
      ["\n\n    if x:\n        return 1\n\n    return 2\n", "if x:\n    return 1\n\nreturn 2", "whole-reply"],
      ["import math\nprint(math.pi)", "import math\nprint(math.pi)", "whole-reply"],
      ["Here it is:\n```python\ndef f():\n    return 1", "def f():\n    return 1", "python-fence"],
      ["````python\nprint('```')\n```\nstill code\n````", "print('```')\n```\nstill code", "python-fence"],
      ["  ```python\n  def f():\n      pass\n  ```", "def f():\n    pass", "python-fence"],
    ];
    for (const [output, code, source] of cases) {
      const got = extractCode(output);
      assert.deepEqual(got, { found: true, code, source }, JSON.stringify(output));
    }
  });

  it("finds no code in prose, empty replies and non-python fences", () => {
    for (const output of ["", "I think the answer is to use a loop.", "Sure, here is how: first sort the list.", "```text\nhello\n```", "# Solution\nUse a dict.", "<answer></answer>"]) {
      assert.deepEqual(extractCode(output), { found: false }, JSON.stringify(output));
    }
  });

  it("tells code from prose by the first line", () => {
    assert.equal(looksLikeCode("def f(x):"), true);
    assert.equal(looksLikeCode("\n\n    return x"), true);
    assert.equal(looksLikeCode("total += 1"), true);
    assert.equal(looksLikeCode("Note that x == 1"), false);
    assert.equal(looksLikeCode("The function returns"), false);
  });

  it("stays linear on hostile text", () => {
    const hostile = [
      "```".repeat(200_000),
      "```python\n".repeat(100_000),
      "```" + "a".repeat(1_000_000) + "`",
      " ".repeat(1_000_000) + "x",
      "a, ".repeat(300_000),
      "<answer>".repeat(100_000),
      "~~~\n".repeat(200_000),
      "x".repeat(1_000_000) + "(",
    ];
    for (const text of hostile) {
      const started = performance.now();
      extractCode(text);
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 1000, `${elapsed.toFixed(0)} ms on ${JSON.stringify(text.slice(0, 20))}`);
    }
  });
});
