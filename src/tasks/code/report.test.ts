import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { readReport } from "./report.js";

const frame = (event: object) => {
  const json = JSON.stringify(event);
  return `${json.length}:${json}\n`;
};
const done = [frame({ event: "start", stage: "program", seq: 0 }), frame({ event: "result", index: 0, status: "pass", seq: 1 }), frame({ event: "done", passed: 1, total: 1, seq: 2 })].join("");

describe("readReport", () => {
  it("reads well-formed frames in order", () => {
    const report = readReport(done, false);
    assert.ok("events" in report);
    assert.deepEqual(
      report.events.map((e) => e.event),
      ["start", "result", "done"],
    );
  });

  it("refuses a partial, extra, malformed, out-of-order or truncated report", () => {
    const broken = {
      partial: done.slice(0, -5),
      "extra bytes": `${done}x`,
      "a glued prefix": `x${done}`,
      "a wrong length": done.replace(/^\d+/, "99"),
      "not JSON": `${done}5:{abc}\n`,
      "a repeated seq": done + frame({ event: "done", passed: 1, total: 1, seq: 2 }),
      "an unknown event": done + frame({ event: "pass", seq: 3 }),
    };
    for (const [name, text] of Object.entries(broken)) assert.ok("error" in readReport(text, false), name);
    assert.ok("error" in readReport(done, true), "truncated");
  });
});
