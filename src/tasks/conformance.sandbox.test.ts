import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { testTaskConformance } from "./conformance.js";
import { conformanceSpecs } from "./conformance-specs.js";
import { taskFamilies } from "./registry.js";

/** The task families whose verifier runs the model's code in the sandbox (bubblewrap): MBPP and HumanEval. */
const sandboxed = new Set(taskFamilies.filter((family) => family.verifier === "sandbox").map((family) => family.name));

describe("task conformance in the sandbox", () => {
  it("the code families are the sandboxed ones", () => {
    assert.deepEqual([...sandboxed].sort(), ["humaneval", "mbpp"]);
  });
});

for (const spec of conformanceSpecs) if (sandboxed.has(spec.name)) testTaskConformance(spec);
