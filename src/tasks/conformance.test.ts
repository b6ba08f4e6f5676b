import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { testTaskConformance } from "./conformance.js";
import { conformanceSpecs } from "./conformance-specs.js";
import { taskFamilies } from "./registry.js";

describe("task conformance", () => {
  it("every registered task family has a conformance spec, and only those", () => {
    assert.deepEqual(conformanceSpecs.map((spec) => spec.name).sort(), taskFamilies.map((family) => family.name).sort());
  });
});

for (const spec of conformanceSpecs) testTaskConformance(spec);
