import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { scriptedModel } from "../models/scripted.js";
import { arithmeticTask, type ArithmeticRecord } from "../tasks/arithmetic/index.js";
import { reflectRetry } from "./reflect-retry.js";

describe("Episode.startedAt", () => {
  it("is the injected wall clock at the episode's start, as an ISO time; the real clock without one", async () => {
    const item = { id: "i", record: { a: 6, b: 7, op: "*" } as ArithmeticRecord };
    const ticks = [new Date("2026-11-25T09:30:00.250Z"), new Date("2026-11-25T23:59:59Z")];
    const episode = await reflectRetry({ model: scriptedModel(["<answer>42</answer>"]), task: arithmeticTask(), item, clock: () => ticks.shift() as Date });
    assert.equal(episode.startedAt, "2026-11-25T09:30:00.250Z");
    assert.equal(ticks.length, 1, "read once, when the episode starts");
    const before = Date.now();
    const real = await reflectRetry({ model: scriptedModel(["<answer>42</answer>"]), task: arithmeticTask(), item });
    const at = Date.parse(real.startedAt ?? "");
    assert.ok(at >= before && at <= Date.now(), `startedAt ${real.startedAt}`);
  });
});
