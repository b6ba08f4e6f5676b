// The client side of the gateway benchmarks: timed requests kept `concurrency` in flight over keep-alive connections,
// the nearest-rank percentile, and a child process's CPU time and resident memory from /proc. Shared by
// bench/gateway.mjs and bench/gateway-dialects.mjs; the median and its bootstrap interval are in median-interval.mjs.
import { readFileSync } from "node:fs";
import http from "node:http";

/**
 * One request (`{ path, body, headers, firstDelta }`, POSTed to 127.0.0.1:port; `headers` an object or a function
 * returning one): its latency in ms, from sending to the last byte of the body, and whether it succeeded (2xx and a
 * complete body). With `firstDelta` (a function returning a fresh detector, `(text) => boolean`, fed the body's text
 * as it arrives until it answers true) also `ttftMs`, from sending to the chunk that completed the first content
 * delta; a body whose detector never fires is not a success.
 */
export function timedRequest(agent, port, { path, body, headers = {}, firstDelta }) {
  return new Promise((resolve) => {
    const started = performance.now();
    // `headers` may be a function, called once a request (e.g. to rotate client keys).
    const own = typeof headers === "function" ? headers() : headers;
    const request = http.request({ host: "127.0.0.1", port, method: "POST", path, agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body), ...own } }, (response) => {
      let ttftMs;
      if (firstDelta === undefined) response.resume();
      else {
        const seen = firstDelta();
        response.setEncoding("utf8");
        response.on("data", (part) => {
          if (ttftMs === undefined && seen(part)) ttftMs = performance.now() - started;
        });
      }
      response.on("end", () => {
        const ok = response.statusCode >= 200 && response.statusCode < 300 && response.complete && (firstDelta === undefined || ttftMs !== undefined);
        resolve({ ms: performance.now() - started, ttftMs, ok });
      });
      response.on("error", () => resolve({ ms: performance.now() - started, ok: false }));
    });
    request.on("error", () => resolve({ ms: performance.now() - started, ok: false }));
    request.setTimeout(60_000, () => request.destroy(new Error("timeout")));
    request.end(body);
  });
}

/**
 * `count` requests with `concurrency` in flight; latencies of the successful ones, the error count and the wall time;
 * with a spec's `firstDelta`, also `ttfts`, each successful request's time to its first content delta, in the order of
 * `latencies`.
 */
export async function block(port, count, concurrency, requestSpec) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const latencies = [];
  const ttfts = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        next++;
        const { ms, ttftMs, ok } = await timedRequest(agent, port, requestSpec);
        if (ok) {
          latencies.push(ms);
          if (ttftMs !== undefined) ttfts.push(ttftMs);
        } else errors++;
      }
    }),
  );
  const wallMs = performance.now() - started;
  agent.destroy();
  return requestSpec.firstDelta === undefined ? { latencies, errors, wallMs } : { latencies, ttfts, errors, wallMs };
}

/** The nearest-rank `q` quantile of an ascending-sorted array (p99: `quantile(xs, 0.99)`). */
export function quantile(sorted, q) {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/** CPU time a process has used (user + system), in ms, from /proc/PID/stat (clock ticks of 10 ms), or null. */
export function cpuMsOf(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}

/** Resident memory of a process in bytes (Linux /proc), or null. */
export function rssOf(pid) {
  try {
    const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}
