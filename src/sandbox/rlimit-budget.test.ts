import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { MIN_SHARE_MB, rlimitBudget } from "./rlimit-budget.js";

describe("rlimitBudget", () => {
  it("under a cgroup sets no address-space limit and keeps maxProcesses", () => {
    assert.deepEqual(rlimitBudget({ memoryMb: 512, maxProcesses: 16 }, true), { addressSpaceMb: null, processes: 16 });
  });

  it("without one, splits the budget over the program's tasks (bubblewrap's init takes one of RLIMIT_NPROC)", () => {
    assert.deepEqual(rlimitBudget({ memoryMb: 512, maxProcesses: 3 }, false), { addressSpaceMb: 256, processes: 3 });
    assert.deepEqual(rlimitBudget({ memoryMb: 2048, maxProcesses: 16 }, false), { addressSpaceMb: 136, processes: 16 });
  });

  it("gives the whole budget to a single task, no fork and no thread, when a share would be too small", () => {
    assert.deepEqual(rlimitBudget({ memoryMb: 512, maxProcesses: 16 }, false), { addressSpaceMb: 512, processes: 2 });
    assert.deepEqual(rlimitBudget({ memoryMb: 100, maxProcesses: 1 }, false), { addressSpaceMb: 100, processes: 2 });
  });

  it("never lets the tasks' shares add up to more than memoryMb", () => {
    for (const memoryMb of [16, 64, 100, 512, 1000, 4096]) {
      for (let maxProcesses = 1; maxProcesses <= 40; maxProcesses++) {
        const { addressSpaceMb, processes } = rlimitBudget({ memoryMb, maxProcesses }, false);
        assert.ok(addressSpaceMb !== null);
        assert.ok(addressSpaceMb * (processes - 1) <= memoryMb, `${memoryMb} MB, ${maxProcesses} processes`);
        assert.ok(processes === 2 || addressSpaceMb >= MIN_SHARE_MB);
      }
    }
  });
});
