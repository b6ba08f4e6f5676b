/**
 * A server that ignores the token limit and returns 40 MB of content for a 256-token request: `reflect eval` reads a
 * bounded part of each body, stores a capped reply with the cut recorded on the call and its span, keeps its run
 * folder small and its memory bounded.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import type { Episode } from "../loops/types.js";
import { replyByteLimit } from "../models/reply-cap.js";
import { assertExit, jsonLines, listenOnLoopback, removeCacheDir, startCli, tempDir } from "./cli-harness.js";

after(removeCacheDir);

const MB = 1024 * 1024;
const CONTENT_BYTES = 40 * MB;

/** Peak resident memory of a live process (Linux), in bytes; 0 once it has exited. */
function peakRss(pid: number): number {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match === null ? 0 : Number(match[1]) * 1024;
  } catch {
    return 0;
  }
}

describe("replies are capped", { timeout: 120_000 }, () => {
  it("40 MB of content for a 256-token request: the run folder stays under 5 MB, memory bounded, the cut recorded", async (t) => {
    let served = 0;
    let bytesWritten = 0;
    const chunk = Buffer.from("x".repeat(MB));
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        served++;
        res.writeHead(200, { "content-type": "application/json" });
        res.on("error", () => {});
        res.write('{"id":"c","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"<answer>1</answer>');
        let sent = 0;
        const pump = (): void => {
          while (sent < CONTENT_BYTES && !res.destroyed) {
            sent += chunk.length;
            bytesWritten += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end('"},"finish_reason":"stop"}],"usage":{"prompt_tokens":50,"completion_tokens":256}}');
        };
        pump();
      });
    });
    const port = await listenOnLoopback(t, server);
    const out = path.join(await tempDir(t), "run");
    const run = await startCli(["eval", "--model", `http://127.0.0.1:${port}/v1#m`, "--task", "arithmetic", "--limit", "4", "--concurrency", "2", "--out", out]);
    let peak = 0;
    let exited = false;
    void run.done.finally(() => (exited = true));
    while (!exited) {
      peak = Math.max(peak, peakRss(run.child.pid as number));
      await sleep(100);
    }
    const result = await run.done;
    assertExit(result, 0);
    const folder = readdirSync(out).reduce((n, f) => n + statSync(path.join(out, f)).size, 0);
    t.diagnostic(`${served} requests; the server wrote ${(bytesWritten / MB).toFixed(0)} MB; run folder ${(folder / 1024).toFixed(0)} KB; peak RSS ${(peak / MB).toFixed(0)} MB`);
    assert.ok(served >= 4);
    assert.ok(folder < 5 * MB, `run folder ${folder} bytes`);
    assert.ok(peak > 0 && peak < 300 * MB, `peak RSS ${(peak / MB).toFixed(0)} MB`);
    assert.ok(bytesWritten < served * CONTENT_BYTES, "the client stopped reading each body early");

    const episodes = jsonLines<Episode>(readFileSync(path.join(out, "episodes.jsonl"), "utf8"));
    assert.equal(episodes.length, 4);
    for (const episode of episodes) {
      const call = episode.attempts[0]?.call;
      assert.ok(call !== undefined);
      assert.ok(call.output.startsWith("<answer>1</answer>xxx"));
      assert.ok(Buffer.byteLength(call.output, "utf8") <= replyByteLimit(256));
      assert.equal(call.finishReason, "length");
      assert.ok(call.truncated !== undefined && call.truncated.bytes > 64 * 1024 && call.truncated.kept === Buffer.byteLength(call.output, "utf8"));
      assert.match(call.truncated.reason, /response body over \d+ bytes: reading stopped/);
    }
    const traces = readFileSync(path.join(out, "traces.jsonl"), "utf8");
    assert.match(traces, /reflect\.truncated\.reason/, "the cut is on the span");
    assert.ok(existsSync(path.join(out, "summary.json")));
  });
});
