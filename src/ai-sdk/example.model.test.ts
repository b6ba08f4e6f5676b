/**
 * examples/ai-sdk.mjs, the AI SDK door's example script, run as a user runs it: a child `node` process importing
 * `ai`, `reflectkit` and `reflectkit/ai-sdk` by name (the package's self-reference through its `exports`), on the
 * real embedded SmolLM2. Checks the shape of what it prints, not what the small model says.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";
import { promisify } from "node:util";

const root = fileURLToPath(new URL("../../", import.meta.url));

describe("examples/ai-sdk.mjs", { timeout: 300_000 }, () => {
  it("runs generateObject through reflectionMiddleware and reflectRetry over fromAISDK, printing the attempts", async () => {
    const started = performance.now();
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ["examples/ai-sdk.mjs"], { cwd: root, timeout: 280_000, maxBuffer: 1 << 20 });
    const seconds = (performance.now() - started) / 1000;
    const [part1, part2] = stdout.split(/^part 2: /m);
    assert.ok(part2 !== undefined, `no part 2 in:\n${stdout}\n${stderr}`);

    // part 1: the object, then each attempt with its checks (schema first, then the caller's) from providerMetadata
    assert.match(part1 ?? "", /^part 1: generateObject through reflectionMiddleware$/m);
    const object = /^ {2}object (\{.*\}); selected attempt (\d) of (\d); stopped by (\S+)$/m.exec(part1 ?? "");
    assert.ok(object !== null, part1);
    assert.equal(typeof (JSON.parse(object[1] as string) as { answer: unknown }).answer, "number");
    const attempts = Number(object[3]);
    assert.ok(attempts >= 1 && attempts <= 2 && Number(object[2]) <= attempts);
    assert.equal((part1?.match(/^ {2}attempt \d: /gm) ?? []).length, attempts);
    assert.equal((part1?.match(/^ {4}check schema: pass/gm) ?? []).length, attempts, "the grammar keeps every attempt inside the schema");
    assert.equal((part1?.match(/^ {4}check custom: (pass|fail)/gm) ?? []).length, attempts);
    assert.equal((part1?.match(/^ {4}reflection: /gm) ?? []).length, attempts - 1, "every attempt but the last was reflected on");
    assert.match(part1 ?? "", /^ {2}usage \(every call of the episode\): \d+ in, \d+ out, \d+ calls$/m);

    // part 2: a reflectkit strategy over fromAISDK
    assert.match(part2, /^reflectRetry on fromAISDK\(embedded#embedded:smollm2-135m\), arithmetic item \S+$/m);
    assert.match(part2, /^ {2}attempt 1: .* — (correct|wrong) \(/m);
    assert.match(part2, /^ {2}correct (true|false); solved at (\d|—); stopped by \S+; \d+ calls$/m);
    console.log(`# examples/ai-sdk.mjs wall time ${seconds.toFixed(1)} s`);
  });
});
