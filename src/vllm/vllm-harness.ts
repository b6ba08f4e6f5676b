/**
 * What the `.vllm` tests share: whether vLLM can run here (the reason to skip if not), and one vLLM server on
 * SmolLM2-135M per test file, started in a `before()` hook (about a minute on two cores) and closed in `after()`.
 * The venv is never built here: `reflect vllm setup` builds it (CI runs it first); a test skips, saying so, without it.
 * Not a test file itself.
 */
import { resolveRegisteredModel } from "../models/resolve.js";
import { ensureConverted, vllmModelSource } from "./convert.js";
import { startVllmServer, type VllmServer } from "./server.js";
import { vllmPython, vllmUnsupportedReason, vllmVenvDir } from "./setup.js";

/** The model every `.vllm` test serves: the smallest registered one. */
export const VLLM_TEST_MODEL = "smollm2-135m";

/** Why the `.vllm` tests cannot run here, for node:test's `skip`; false when they can. */
export function vllmSkip(): string | false {
  const unsupported = vllmUnsupportedReason();
  if (unsupported !== undefined) return `vLLM's CPU build cannot run here: ${unsupported}`;
  if (vllmPython() === undefined) return `no vLLM environment at ${vllmVenvDir()} — run \`reflect vllm setup\` to build it (CI does)`;
  return false;
}

/** SmolLM2-135M's GGUF fetched into the model cache and converted for vLLM (once); gives the venv's Python and the folder. */
export async function prepareTestVllmModel(): Promise<{ python: string; folder: string }> {
  const python = vllmPython();
  if (python === undefined) throw new Error(`no vLLM environment at ${vllmVenvDir()}: check vllmSkip() before starting`);
  await resolveRegisteredModel(VLLM_TEST_MODEL);
  return { python, folder: await ensureConverted(python, await vllmModelSource(VLLM_TEST_MODEL)) };
}

/** SmolLM2-135M served by vLLM (converted from its GGUF once, kept in the model cache); LoRA at run time when asked. */
export async function startTestVllm(options: { enableLora?: boolean } = {}): Promise<VllmServer> {
  const { python, folder } = await prepareTestVllmModel();
  const tail: string[] = [];
  try {
    return await startVllmServer({
      python,
      folder,
      name: VLLM_TEST_MODEL,
      ...(options.enableLora === true ? { enableLora: true } : {}),
      onLog: (line) => {
        tail.push(line);
        if (tail.length > 40) tail.shift();
      },
    });
  } catch (error) {
    throw new Error(`${(error as Error).message}\n--- vLLM's log, last lines ---\n${tail.join("\n")}`, { cause: error });
  }
}
