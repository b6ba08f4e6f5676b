// What redacting the upstream's key costs a relayed stream, per dialect: median MB/s of the relay's SSE redactor over
// a stream of small deltas, with a key set (every event parsed, each stream held back by the fixed window) and
// without one (the relay passes the chunks on untouched: the figure is the loop alone, for scale).
//
// Usage (after npm run build):
//   node bench/redaction.mjs [--mb 8] [--runs 7] [--delta 24]
//
// - The stream is each dialect's events as an upstream writes them (src/serve/redaction-harness.ts), the text cut
//   into deltas of --delta characters, one event a chunk, --mb megabytes of events in all; the text never holds the
//   key, as in almost all traffic (a stream that echoes it costs the same: the events are parsed either way).
// - Each dialect runs --runs times after one warm-up run; the table gives the median MB/s and the slowest run's.
// Prints a markdown table for BENCHMARKS.md.
import os from "node:os";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { Secret } from "../dist/serve/redact-secret.js";
import { SseRedactor } from "../dist/serve/redact-stream.js";
import { upstreamEvents } from "../dist/serve/redaction-harness.js";

const { values } = parseArgs({ options: { mb: { type: "string", default: "8" }, runs: { type: "string", default: "7" }, delta: { type: "string", default: "24" } } });
const megabytes = Number(values.mb);
const runs = Number(values.runs);
const deltaChars = Number(values.delta);
const secret = new Secret("sk-bench-0123456789abcdef0123456789abcdef");

/** The dialect's events for enough text to make `megabytes` of events, as chunks. */
function chunksOf(dialect) {
  const words = "the quick brown fox jumps over the lazy dog while the gateway relays every token as it comes ";
  const size = (n) => Buffer.byteLength(upstreamEvents(dialect, { text: Array.from({ length: n }, () => words.slice(0, deltaChars)) }).join(""));
  // A delta's bytes: its own event, and its text again in the stream's whole-text events (`.done`, the final response).
  const perDelta = (size(101) - size(1)) / 100;
  const count = Math.ceil((megabytes * 1024 * 1024) / perDelta);
  const text = Array.from({ length: count }, (_, i) => words.repeat(2).slice(i % words.length, (i % words.length) + deltaChars));
  return upstreamEvents(dialect, { text, args: text.slice(0, 64) }).map((e) => Buffer.from(e, "utf8"));
}

function mbPerSecond(chunks, withKey) {
  const bytes = chunks.reduce((n, c) => n + c.byteLength, 0);
  const started = performance.now();
  let out = 0;
  if (withKey) {
    const redactor = new SseRedactor(secret, chunks.dialect);
    for (const chunk of chunks) out += redactor.push(chunk).byteLength;
    out += redactor.end().byteLength;
  } else for (const chunk of chunks) out += chunk.byteLength;
  const seconds = (performance.now() - started) / 1000;
  if (out === 0) throw new Error("nothing came out");
  return bytes / (1024 * 1024) / seconds;
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const rows = [];
for (const dialect of ["chat", "responses", "messages"]) {
  const chunks = chunksOf(dialect);
  chunks.dialect = dialect;
  for (const withKey of [false, true]) {
    mbPerSecond(chunks, withKey);
    const figures = Array.from({ length: runs }, () => mbPerSecond(chunks, withKey));
    rows.push(`| ${dialect} | ${withKey ? "set" : "none"} | ${chunks.length} | ${median(figures).toFixed(1)} | ${Math.min(...figures).toFixed(1)} |`);
  }
}
console.log(`${megabytes} MB of events a dialect, deltas of ${deltaChars} characters, ${runs} runs; Node ${process.version}, ${os.cpus()[0]?.model ?? "unknown CPU"}\n`);
console.log("| dialect | key | events | median MB/s | slowest MB/s |\n|---|---|---:|---:|---:|");
console.log(rows.join("\n"));
