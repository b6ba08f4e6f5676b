/**
 * The two kinds of run folder `reflect export` reads, made for its tests: a `reflect eval` run written by the real CLI
 * against the scripted OpenAI-compatible server (arithmetic, 4 items, 2 turns; the items whose first operand is even
 * fail their first attempt), and a gateway record written by the record writer with content (one request solved at
 * once, one after a reflection, one whose second attempt fails and rolls back, one with tool calls and a judge).
 * Not a test file itself (a `test-*` name would make `node --test dist/` run it as one).
 */
import path from "node:path";
import type { TestContext } from "node:test";
import { assertExit, cli, startServer } from "../cli/cli-harness.js";
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import type { Episode } from "../loops/types.js";

/** Runs `reflect eval` into `dir` (a new folder): config.json, summary.json and episodes.jsonl. */
export async function writeEvalRunFixture(t: TestContext, dir: string): Promise<void> {
  const server = await startServer(t);
  assertExit(await cli(["eval", "--task", "arithmetic", "--model", server.spec, "--out", dir, "--limit", "4", "--turns", "2", "--json"]), 0);
}

export function gatewayFixtureEpisodes(): Episode[] {
  const at = (time: string) => `2026-11-25T${time}Z`;
  return [
    requestEpisode({ id: "solved-first", passes: [true], startedAt: at("10:00:00") }),
    requestEpisode({ id: "solved-second", passes: [false, true], startedAt: at("10:01:00") }),
    requestEpisode({ id: "rolled-back", passes: [false, false, false], selected: 1, startedAt: at("10:02:00") }),
    requestEpisode({ id: "every-field", passes: [false, true], everyField: true, startedAt: at("10:03:00") }),
  ];
}

/** Writes the gateway fixture as a record with content into `dir`. */
export async function writeGatewayRecordFixture(dir: string): Promise<void> {
  const writer = await openRecordWriter({ dir: path.resolve(dir), recordContent: true, config: { kind: "gateway", upstream: "http://127.0.0.1:9/v1#upstream", model: "upstream" } });
  for (const episode of gatewayFixtureEpisodes()) await writer.append(episode);
  await writer.close();
}
