import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { episodeProgress, etaMs, formatDuration, type ProgressStream } from "./episode-progress.js";

/** A stream that records what is written, and a clock the test moves. */
function fakeTerminal(isTTY: boolean): { stream: ProgressStream & { text: string }; clock: { ms: number }; now: () => number } {
  const stream = {
    isTTY,
    columns: 200,
    text: "",
    write(chunk: string) {
      stream.text += chunk;
      return true;
    },
  };
  const clock = { ms: 1_000_000 };
  return { stream, clock, now: () => clock.ms };
}

const labels = { noun: "episodes", rightLabel: "final answer right" };
/** The line a terminal shows now: the text after the last carriage return, without the clear-to-end code. */
const shown = (text: string) => (text.split("\r").at(-1) ?? "").replace("\x1b[K", "").trimEnd();

describe("etaMs", () => {
  it("is unknown until an episode of this process ends, and ignores episodes resumed from disk", () => {
    assert.equal(etaMs({ total: 20, resumed: 4, done: 0, right: 3, elapsedMs: 60_000, lastDoneAtMs: 0 }), null);
    // 4 resumed, 2 done here in 10 s: 14 left at 5 s each, the last one ended just now.
    assert.equal(etaMs({ total: 20, resumed: 4, done: 2, right: 3, elapsedMs: 10_000, lastDoneAtMs: 10_000 }), 70_000);
  });

  it("counts down between episodes, but not below the episodes after the one in progress", () => {
    const state = { total: 10, resumed: 0, done: 2, right: 1, elapsedMs: 12_000, lastDoneAtMs: 10_000 };
    assert.equal(etaMs(state), 40_000 - 2_000);
    assert.equal(etaMs({ ...state, elapsedMs: 60_000 }), 35_000);
    assert.equal(etaMs({ ...state, done: 10 }), 0);
  });
});

describe("formatDuration", () => {
  it("reads at a glance", () => {
    assert.deepEqual([0, 42_400, 185_000, 3_720_000].map(formatDuration), ["0s", "42s", "3m05s", "1h02m"]);
  });
});

describe("episodeProgress on a terminal", () => {
  it("shows eta — before the first episode, redraws on a timer, and computes the ETA from this process only", async () => {
    const { stream, clock, now } = fakeTerminal(true);
    const progress = episodeProgress({ total: 20, ...labels, stream, now, refreshMs: 10 });
    assert.equal(shown(stream.text), "episodes [░░░░░░░░░░░░░░░░░░░░] 0/20 · final answer right 0 · 0s elapsed · eta —");
    for (let i = 0; i < 4; i++) progress.tick(i % 2 === 0, true); // restored from an earlier run, instantly
    assert.match(shown(stream.text), /^episodes \[████░+\] 4\/20 \(4 resumed\) · final answer right 2 · 0s elapsed · eta —$/);
    clock.ms += 5_000;
    progress.tick(true, false);
    assert.match(shown(stream.text), / 5\/20 \(4 resumed\) · final answer right 3 · 5s elapsed · eta 1m15s$/);
    // No episode ends, the clock moves: the timer redraws elapsed time and the ETA.
    clock.ms += 3_000;
    const before = stream.text.length;
    while (stream.text.length === before) await sleep(5);
    assert.match(shown(stream.text), / 5\/20 \(4 resumed\) · final answer right 3 · 8s elapsed · eta 1m12s$/);
    progress.stop();
    assert.ok(stream.text.endsWith("\n"));
    const after = stream.text;
    await sleep(40);
    assert.equal(stream.text, after, "nothing is drawn after stop");
    progress.stop();
    assert.equal(stream.text, after, "a second stop writes nothing");
  });
});

describe("episodeProgress in a log file (not a terminal)", () => {
  it("writes a line when an episode ends: the first, the last, and at most one every logEveryMs between", async () => {
    const { stream, clock, now } = fakeTerminal(false);
    const progress = episodeProgress({ total: 10, ...labels, stream, now, logEveryMs: 30_000, refreshMs: 5 });
    await sleep(30);
    assert.equal(stream.text, "", "no line before an episode ends, however long it takes");
    progress.tick(false, true);
    assert.equal(stream.text, "", "resumed episodes write no line of their own");
    for (let i = 0; i < 9; i++) {
      clock.ms += 10_000;
      progress.tick(i < 5, false);
    }
    progress.stop();
    assert.deepEqual(stream.text.split("\n"), [
      "episodes 2/10 (1 resumed) · final answer right 1 · 10s elapsed · eta 1m20s",
      "episodes 5/10 (1 resumed) · final answer right 4 · 40s elapsed · eta 50s",
      "episodes 8/10 (1 resumed) · final answer right 5 · 1m10s elapsed · eta 20s",
      "episodes 10/10 (1 resumed) · final answer right 5 · 1m30s elapsed · done",
      "",
    ]);
  });

  it("on stop before the end, writes the state a reader has not seen", () => {
    const { stream, clock, now } = fakeTerminal(false);
    const progress = episodeProgress({ total: 10, ...labels, stream, now });
    clock.ms += 1_000;
    progress.tick(true, false);
    clock.ms += 1_000;
    progress.tick(true, false);
    progress.stop();
    assert.deepEqual(stream.text.split("\n").slice(0, -1), ["episodes 1/10 · final answer right 1 · 1s elapsed · eta 9s", "episodes 2/10 · final answer right 2 · 2s elapsed · eta 8s"]);
  });
});
