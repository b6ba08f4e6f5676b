/**
 * Member names a client's JSON may carry that an ordinary object also answers to: `__proto__`, `constructor`,
 * `toString`, `hasOwnProperty`, `valueOf`, … (every own name of `Object.prototype`). `JSON.parse` makes such a member
 * an own data property like any other, but a lookup by that name in an ordinary object — a table of field rules, a
 * record read by name — finds the prototype's function where the member is absent, and an assignment by it replaces
 * the prototype. So the gateway's tables are `Map`s and `Set`s, and the records it reads by name pass through
 * `refuseInheritedNames` first: no field of the three APIs has such a name, so one is answered 400 naming it, before
 * any work, rather than read as something it is not.
 */
import { RequestFieldError } from "../errors.js";

/** The names an ordinary object inherits, `__proto__` among them. */
export const INHERITED_NAMES: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/**
 * Refuses the first member of `record` named like one an ordinary object inherits, naming it as `field.name`
 * (`messages[0].content[1].constructor`); `field` empty names a top-level member alone. For a record whose members
 * have fixed names (a message, a tool, a content part, `reflect`); a free-form map (a JSON schema, `metadata`, a
 * task's item) keeps such names as plain data.
 */
export function refuseInheritedNames(record: Readonly<Record<string, unknown>>, field: string): void {
  for (const name of Object.keys(record)) {
    if (INHERITED_NAMES.has(name)) throw new RequestFieldError(field === "" ? name : `${field}.${name}`, "is not a field of this API; remove it");
  }
}
