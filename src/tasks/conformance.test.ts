import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { testTaskConformance } from "./conformance.js";
import { conformanceSpecs } from "./conformance-specs.js";
import { isEnvironmentTask } from "./environment.js";
import { taskFamilies } from "./registry.js";

/** The families whose verifier runs code in the sandbox have their conformance in conformance.sandbox.test.ts. */
const pure = new Set(taskFamilies.filter((family) => family.verifier !== "sandbox").map((family) => family.name));

describe("task conformance", () => {
  it("every registered task family judged by its reply's text has a conformance spec, and only those", () => {
    // An environment family is judged by its environment's state; its conformance is the replay of its ground truth
    // through its sessions (bfcl-multi-turn.worker.test.ts, textworld-express.worker.test.ts).
    const judgedByText = taskFamilies.filter((family) => !isEnvironmentTask(family.create({})));
    assert.deepEqual(conformanceSpecs.map((spec) => spec.name).sort(), judgedByText.map((family) => family.name).sort());
  });
});

for (const spec of conformanceSpecs) if (pure.has(spec.name)) testTaskConformance(spec);
