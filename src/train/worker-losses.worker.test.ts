import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import path from "node:path";
import { before, describe, it } from "node:test";
import { workerPackageDir } from "./setup.js";
import { prepareTestWorker } from "./worker-harness.js";

// The worker venv (built if absent), at module level: outside every test timeout.
let python = "";
// Built (or found) before the first test, not on import.
before(async () => {
  python = await prepareTestWorker();
});

// The worker's own unit tests (worker/tests, Python's unittest: the losses against hand computations), run in the
// worker's venv so the project's one test runner covers them.
describe("the worker's Python unit tests", () => {
  it("pass (python -m unittest discover -s worker/tests)", { timeout: 120_000 }, () => {
    const run = spawnSync(python, ["-m", "unittest", "discover", "-s", path.join(workerPackageDir(), "tests"), "-v"], {
      env: { ...process.env, PYTHONPATH: workerPackageDir(), PYTHONWARNINGS: "ignore" },
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /Ran [1-9]\d* tests?/);
    assert.match(run.stderr, /\nOK\b/);
  });
});
