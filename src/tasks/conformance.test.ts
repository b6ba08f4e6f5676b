import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { testTaskConformance } from "./conformance.js";
import { conformanceSpecs } from "./conformance-specs.js";
import { taskFamilies } from "./registry.js";

/** The families whose verifier runs code in the sandbox have their conformance in conformance.sandbox.test.ts. */
const pure = new Set(taskFamilies.filter((family) => family.verifier !== "sandbox").map((family) => family.name));

describe("task conformance", () => {
  it("every registered task family has a conformance spec, and only those", () => {
    assert.deepEqual(conformanceSpecs.map((spec) => spec.name).sort(), taskFamilies.map((family) => family.name).sort());
  });
});

for (const spec of conformanceSpecs) if (pure.has(spec.name)) testTaskConformance(spec);
