/**
 * Two `reflect serve` processes sharing one PostgreSQL lesson store (`--store postgres://…`), on a server the test
 * starts: a lesson one gateway learns from a failed draft is shown by the other to a request with the same key.
 * Skipped, saying so, only where PostgreSQL's binaries are not installed.
 */
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import OpenAI from "openai";
import { LOCAL_TENANT } from "../core/tenant.js";
import { postgresMissing, startPostgres, type RunningPostgres } from "../memory/postgres-harness.js";
import { openPostgresRequestLessons } from "../memory/postgres-request-lessons.js";
import { DIGITS_LESSON as LESSON, digitsLessonScript as scripted, reply, startUpstream, UPSTREAM_MODEL } from "../serve/serve-harness.js";
import { assertExit, gatewayUrlOf, removeCacheDir, startCli } from "./cli-harness.js";

let server: RunningPostgres | undefined;
after(removeCacheDir);

describe("reflect serve --store postgres://", { skip: postgresMissing() }, () => {
  before(async () => {
    server = await startPostgres();
  });
  after(() => server?.stop());

  it("shares lessons between two gateways: one learns from a failed draft, the other shows the lesson", async (t) => {
    const url = await (server as RunningPostgres).createDatabase("gateways");
    const upstream = await startUpstream(t, reply(scripted));
    const gateways = await Promise.all(
      [0, 1].map(async () => {
        const run = await startCli(["serve", "--upstream", `${upstream.baseUrl}#${UPSTREAM_MODEL}`, "--port", "0", "--store", url]);
        t.after(async () => {
          if (run.child.exitCode === null) run.child.kill("SIGKILL");
        });
        return { run, url: await gatewayUrlOf(run) };
      }),
    );
    const [a, b] = gateways as [(typeof gateways)[0], (typeof gateways)[0]];
    const body = (question: string) => ({ model: UPSTREAM_MODEL, messages: [{ role: "user", content: question }], reflect: { regex: "^\\d+$", memory: { key: "orders" } } }) as never;
    const first = await new OpenAI({ baseURL: a.url, apiKey: "unused", maxRetries: 0 }).chat.completions.create(body("What is the total of order 6x7?"));
    assert.equal(first.choices[0]?.message.content, "42");

    // Recorded in the background after the answer: wait until the store holds it.
    const store = await openPostgresRequestLessons(url);
    t.after(() => store.close());
    const deadline = Date.now() + 10_000;
    while ((await store.recall({ tenant: LOCAL_TENANT, key: "orders" }, "total order", 3)).length === 0 && Date.now() < deadline) await sleep(50);
    assert.deepEqual((await store.recall({ tenant: LOCAL_TENANT, key: "orders" }, "total order", 3)).map((l) => l.text), [LESSON]);

    const calls = upstream.requests.length;
    await new OpenAI({ baseURL: b.url, apiKey: "unused", maxRetries: 0 }).chat.completions.create(body("What is the total of order 7x8?"));
    const shown = upstream.requests[calls]?.body.messages as Array<{ role: string; content: string }>;
    assert.deepEqual(shown.map((m) => m.role), ["user", "user"]);
    assert.ok(shown[0]?.content.includes(`<notes>\n1. (a similar problem) ${LESSON}\n</notes>`), shown[0]?.content);
    assert.equal(shown[1]?.content, "What is the total of order 7x8?");

    const metrics = await (await fetch(a.url.replace(/\/v1$/u, "/metrics"))).text();
    assert.match(metrics, /reflect_gateway_lessons_total\{event="recorded"\} 1/u);
    const metricsB = await (await fetch(b.url.replace(/\/v1$/u, "/metrics"))).text();
    assert.match(metricsB, /reflect_gateway_lessons_total\{event="shown"\} 1/u);

    for (const { run } of gateways) {
      run.child.kill("SIGTERM");
      const result = await run.done;
      assertExit(result, 0);
      assert.match(result.stdout, /lessons in postgres:\/\/reflect@127\.0\.0\.1:\d+\/gateways/u);
    }
  });
});
