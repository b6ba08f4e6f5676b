import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ReflectkitError } from "../errors.js";
import { requireOptional } from "./optional-package.js";

describe("requireOptional", () => {
  it("loads an installed package and returns the same copy each time", () => {
    const first = requireOptional<{ Ajv: unknown }>("ajv", "a schema check");
    assert.equal(typeof first.Ajv, "function");
    assert.equal(requireOptional("ajv", "a schema check"), first);
  });

  it("names the package, the feature needing it and the install command when the package is missing", () => {
    assert.throws(
      () => requireOptional("reflectkit-no-such-package", "a lesson store"),
      (error: unknown) => ReflectkitError.isInstance(error) && /a lesson store needs the package reflectkit-no-such-package, which is not installed — run `npm install reflectkit-no-such-package`/.test((error as Error).message),
    );
  });
});
