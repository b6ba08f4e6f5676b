import assert from "node:assert/strict";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { rawRequest } from "../serve/serve-harness.js";
import { startViewer, type RunningViewer } from "./viewer-server.js";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const RUN = path.join(REPO, "src/report/fixtures/runs/arithmetic-smollm2-135m-t4");

describe("reflect view's server", () => {
  let viewer: RunningViewer;
  before(async () => {
    viewer = await startViewer({ runDirs: [RUN] });
  });
  after(() => viewer.close());

  it("serves the page and the data to requests naming 127.0.0.1 or localhost", async () => {
    for (const host of [`127.0.0.1:${viewer.port}`, `localhost:${viewer.port}`]) {
      const page = await rawRequest(viewer.url, { headers: { host } });
      assert.equal(page.status, 200, host);
      assert.match(page.headers["content-type"] ?? "", /^text\/html/u);
      const data = await rawRequest(`${viewer.url}api/data`, { headers: { host, "sec-fetch-site": "same-origin" } });
      assert.equal(data.status, 200, host);
      assert.equal((JSON.parse(data.body) as { episodes: unknown[] }).episodes.length, 20);
    }
  });

  it("refuses a foreign Host (DNS rebinding) and an Origin of another site, in plain text", async () => {
    const rebound = await rawRequest(`${viewer.url}api/data`, { headers: { host: `evil.example:${viewer.port}` } });
    assert.equal(rebound.status, 403);
    assert.match(rebound.headers["content-type"] ?? "", /^text\/plain/u);
    assert.match(rebound.body, /^Host evil\.example .*open the page at http:\/\/127\.0\.0\.1:\d+\/ instead/u);
    const foreign = await rawRequest(`${viewer.url}api/data`, { headers: { host: `127.0.0.1:${viewer.port}`, origin: "http://evil.example" } });
    assert.equal(foreign.status, 403);
    assert.match(foreign.body, /^Origin http:\/\/evil\.example/u);
    assert.equal((await rawRequest(viewer.url, { method: "POST", headers: { host: `127.0.0.1:${viewer.port}` } })).status, 405);
  });
});
