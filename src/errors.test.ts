import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { InputError, ModelCallError, ReflectkitError, RequestFieldError, UsageError } from "./errors.js";
import { BudgetSpentError } from "./loops/budget.js";

describe("errors are matched by class", () => {
  it("isInstance of a subclass holds for it and its subclasses only; of the base, for every reflectkit error", () => {
    const input = new InputError("bad line", "items.jsonl", 3);
    assert.equal(InputError.isInstance(input), true);
    assert.equal(ReflectkitError.isInstance(input), true);
    assert.equal(UsageError.isInstance(input), false);
    assert.equal(InputError.isInstance(new UsageError("bad flag")), false);
    assert.equal(BudgetSpentError.isInstance(new BudgetSpentError("tokens")), true);
    assert.equal(ModelCallError.isInstance(new BudgetSpentError("tokens")), false);
    assert.equal(RequestFieldError.isInstance(new RequestFieldError("reflect.max_turns", "must be an integer")), true);
    for (const other of [new Error("plain"), { name: "InputError", message: "a look-alike" }, "InputError", null, undefined]) {
      assert.equal(InputError.isInstance(other), false, String(other));
      assert.equal(ReflectkitError.isInstance(other), false, String(other));
    }
  });

  it("an error from another copy of the package matches its class by place in the prototype chain, not by name string", () => {
    // A second copy: the same marker, classes of the same names, but not the same class objects.
    const base = {
      ReflectkitError: class ReflectkitError extends Error {
        constructor(message: string) {
          super(message);
          Object.defineProperty(this, Symbol.for("reflectkit.error"), { value: true });
        }
      },
    };
    const copy = { InputError: class InputError extends base.ReflectkitError {}, UsageError: class UsageError extends base.ReflectkitError {} };
    const fromCopy = new copy.InputError("bad line");
    assert.equal(fromCopy instanceof InputError, false);
    assert.equal(InputError.isInstance(fromCopy), true);
    assert.equal(ReflectkitError.isInstance(fromCopy), true);
    assert.equal(UsageError.isInstance(fromCopy), false);
    // A name set on an unrelated error does not make it one.
    const renamed = Object.assign(new copy.UsageError("bad flag"), { name: "InputError" });
    assert.equal(InputError.isInstance(renamed), false);
  });
});
