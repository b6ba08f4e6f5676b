import type { Command } from "commander";
import { armNames, type ArmName } from "../serve/arms.js";
import { parseReflectOverride, replayOverridable, replayRecord } from "../serve/replay.js";
import { choice, int } from "./parse.js";

interface ReplayFlags {
  record?: string;
  requests?: string;
  gateway: string;
  arm?: ArmName;
  reflect?: string;
  keyEnv: string;
  concurrency: number;
  out?: string;
  timeoutMs: number;
}

/** `reflect replay`: a gateway record's reflected requests sent again to a gateway, which records the new episodes. */
export function registerReplay(program: Command): void {
  program
    .command("replay")
    .description("send the reflected requests of a gateway record (reflect serve --record DIR --record-content), or reflect distill's held-out requests, to a gateway again, each by the door it came in; the gateway records the new episodes, each naming the one it replays")
    .option("--record <dir>", "the record folder to replay (made with --record-content)")
    .option("--requests <file>", "instead of --record: gateway requests one a line, as reflect distill writes held-out-requests.jsonl")
    .requiredOption("--gateway <url>", "required: the gateway to send to, e.g. http://127.0.0.1:8787")
    .option("--arm <arm>", "run every request on this arm (reflect.arm: base or adapter); default: the gateway's canary decides", choice([...armNames]))
    .option("--reflect <json>", `change the loop's options on every request: a JSON object of ${replayOverridable.join(", ")} whose fields replace the recorded ones (null removes one), e.g. '{"max_turns": 1}' for one call a request`)
    .option("--key-env <name>", "environment variable holding the gateway's client key (the first, when it holds several, comma-separated)", "REFLECT_GATEWAY_KEY")
    .option("--concurrency <n>", "requests in flight at once", int(1), 1)
    .option("--out <dir>", "keep a log of the requests answered here; the same command run again sends only the rest")
    .option("--timeout-ms <n>", "limit on one request", int(1), 600_000)
    .action(async (flags: ReplayFlags) => {
      // A gateway started with several keys (comma-separated) takes any one of them.
      const key = process.env[flags.keyEnv]?.split(",")[0]?.trim();
      const result = await replayRecord({
        ...(flags.record === undefined ? {} : { recordDir: flags.record }),
        ...(flags.requests === undefined ? {} : { requestsFile: flags.requests }),
        gateway: flags.gateway,
        ...(flags.arm === undefined ? {} : { arm: flags.arm }),
        ...(flags.reflect === undefined ? {} : { reflect: parseReflectOverride(flags.reflect) }),
        ...(key === undefined ? {} : { apiKey: key }),
        concurrency: flags.concurrency,
        ...(flags.out === undefined ? {} : { outDir: flags.out }),
        timeoutMs: flags.timeoutMs,
        onProgress: (p) => process.stderr.write(`replay: ${p.done + p.failed} of ${p.total - p.skipped} sent (${p.failed} failed${p.skipped > 0 ? `, ${p.skipped} answered before` : ""})\n`),
      });
      const dialects = Object.entries(result.dialects).map(([d, n]) => `${n} ${d}`).join(", ");
      process.stdout.write(`replay: ${result.done} requests answered${result.skipped > 0 ? `, ${result.skipped} answered in an earlier run` : ""} (${dialects}${flags.arm === undefined ? "" : `, on the ${flags.arm} arm`})\n`);
    });
}
