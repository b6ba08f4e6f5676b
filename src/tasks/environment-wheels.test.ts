import assert from "node:assert/strict";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { environmentDir, ensureWheels } from "./environment-wheels.js";

/** A stand-in for `python3 -m pip download`: a shell script that writes the given bytes as the wheel, or fails. */
function fakePython(dir: string, body: string): string {
  const file = path.join(dir, "python");
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

const spec = { label: "the test environment", folder: "demo-1.0", wheels: [{ name: "demo-pkg", version: "1.0", sha256: "0".repeat(64) }] };

describe("environment wheels", () => {
  it("a wheel whose sha256 differs from the pin is refused, and nothing is unpacked", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "env-wheels-"));
    // Writes a wheel of the pinned name into pip download's `-d DIR`.
    const python = fakePython(dir, 'while [ "$#" -gt 0 ]; do [ "$1" = "-d" ] && out="$2"; shift; done\nprintf "not the pinned wheel" > "$out/demo_pkg-1.0-py3-none-any.whl"');
    await assert.rejects(ensureWheels(spec, { cacheDir: path.join(dir, "cache"), python }), /sha256 of demo_pkg-1\.0-py3-none-any\.whl is [0-9a-f]{64}, expected 0{64}/);
    assert.deepEqual(readdirSync(environmentDir("demo-1.0", { cacheDir: path.join(dir, "cache") })), []);
  });

  it("a failed pip download names the requirement and pip's last words", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "env-wheels-"));
    const python = fakePython(dir, 'echo "ERROR: No matching distribution found for demo-pkg==1.0" >&2\nexit 1');
    await assert.rejects(ensureWheels(spec, { cacheDir: path.join(dir, "cache"), python }), /could not fetch demo-pkg==1\.0 with pip download .*: ERROR: No matching distribution found for demo-pkg==1\.0/);
  });

  it("an unpacked folder already there is used as it is, without pip", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "env-wheels-"));
    const cacheDir = path.join(dir, "cache");
    const folder = path.join(environmentDir("demo-1.0", { cacheDir }), "demo-pkg-1.0");
    mkdirSync(folder, { recursive: true });
    const python = fakePython(dir, `touch ${JSON.stringify(path.join(dir, "pip-ran"))}\nexit 1`);
    assert.deepEqual(await ensureWheels(spec, { cacheDir, python }), [folder]);
    assert.equal(existsSync(path.join(dir, "pip-ran")), false);
  });
});
