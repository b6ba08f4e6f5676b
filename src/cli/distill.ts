import path from "node:path";
import { InvalidArgumentError, type Command } from "commander";
import { UsageError } from "../errors.js";
import { isTenantName } from "../core/tenant.js";
import type { DistillCounts, TenantSelection } from "../data/distill-set.js";
import { writeDistillData } from "../data/record-distill.js";
import { writeFileWhole } from "../record/log.js";
import { replayRequest } from "../serve/replay-request.js";
import { gatewayCaps } from "../serve/server.js";
import { writeAdapterFiles } from "../train/adapter-files.js";
import { readSftData } from "../train/datasets.js";
import { sftFingerprint, trainSft } from "../train/sft.js";
import { commonFlags, printResult, summarise, withWorker, type CommonFlags } from "./train.js";
import { nonNegativeNumber } from "./parse.js";

interface DistillFlags extends CommonFlags {
  fromRecord: string[];
  tenant: string[];
  allTenants: boolean;
  heldOut: number;
  train: boolean;
  check: boolean;
}

const HELP = `
Reads gateway records (reflect serve --record DIR --record-content) and keeps each request whose returned answer
passed its checks — first-draft passes included, so the adapter keeps what already works; failed, unjudged and
answerless requests are left out and counted, and so are requests whose only checks cannot fail (a regex that
matches the empty reply, a schema that accepts every value), re-checked from the record whatever it says.

Only the tenants named are read: --tenant NAME (repeatable), or --all-tenants for every one; one of them is
required, so one tenant's traffic never trains another's adapter unasked. An episode's tenant is the one its record
names; a record written before tenants is local's (--tenant local). The card counts rows by tenant and by kind of
check.

Each kept request is one example: its conversation (system included) → the verified answer (text, then tool calls
as the embedded engine's tools prompt asks for them). The reflection conversation is not trained. The same
conversation twice makes one example (the first in record order).

RUN/ holds:
  train.jsonl, held-out.jsonl      TRL conversational SFT rows, split by a hash of the conversation and --seed
  held-out-requests.jsonl          the held-out requests as gateway requests, for reflect replay
  README.md                        the dataset card: sources, kept and left out and why, split, dedupe, license
  config.json                      the options and a fingerprint of the data
  train/                           the SFT run (reflect train sft's run folder: checkpoints, metrics.jsonl)
  adapter.gguf (+ .json)           the GGUF LoRA for reflect serve --lora / reflect eval --lora (a .gguf base only)
  adapter-peft/                    the PEFT folder, for vLLM's /v1/load_lora_adapter

Killed, the same command resumes: the data is rebuilt and must match RUN's (a record that grew since is refused —
pass another --out), training continues from its last checkpoint, and the adapter is written again.

Examples:
  reflect distill --from-record records/gw --tenant team-a --out runs/distill-1 --no-train
  reflect distill --from-record records/gw records/gw-b --all-tenants --out runs/distill-1 --steps 100 --lora-rank 8
`;

export function registerDistill(program: Command): void {
  const command = program
    .command("distill")
    .description("one-pass training data from the gateway's record (requests whose answer passed → that answer), an SFT LoRA trained on it, exported as a GGUF LoRA and a PEFT folder")
    .requiredOption("--from-record <dir...>", "gateway record folders (reflect serve --record DIR --record-content), read in this order")
    .option("--tenant <name>", "train on this tenant's requests (repeatable); or --all-tenants", collectTenant, [])
    .option("--all-tenants", "train on every tenant's requests; or --tenant NAME", false)
    .option("--held-out <share>", "share of requests held out of training, from 0 up to 1", nonNegativeNumber, 0.2)
    .option("--no-train", "write the data, the held-out requests and the card, and stop")
    .option("--no-check", "skip comparing the GGUF adapter under node-llama-cpp with the PyTorch model")
    .addHelpText("after", HELP);
  commonFlags(command, { steps: 50, batchSize: 8, lr: 2e-4 }, { out: "the distill run folder (data, card, train/, adapter); the same command resumes it", seed: "seed of the train/held-out split and of the training data order" }).action(async (flags: DistillFlags) => {
    if (flags.full) throw new UsageError("reflect distill trains a LoRA adapter, to serve with `reflect serve --lora` beside the base: drop --full");
    const tenants = tenantSelection(flags);
    const out = path.resolve(flags.out);
    const { set, files } = await writeDistillData({
      from: flags.fromRecord,
      tenants,
      out,
      heldOut: flags.heldOut,
      seed: flags.seed,
      replayRequest: (request) => replayRequest(request.id, request.record, { model: request.model, maxTokens: gatewayCaps.attemptMaxTokens }),
      argv: process.argv.slice(2),
    });
    process.stderr.write(`${countsLine(set.counts)}\nwrote ${files.train}, ${files.heldOut}, ${files.heldOutRequests} and the card ${files.card}\n`);
    const c = set.counts;
    const dataResult = {
      out,
      tenants: tenants.kind === "all" ? "all" : tenants.names,
      train: c.train,
      held_out: c.heldOut,
      held_out_requests: c.heldOutRequests,
      left_out: { failed: c.failed, unjudged: c.unjudged, vacuous: c.vacuous, no_answer: c.noAnswer, duplicates: c.duplicates, other_tenants: c.otherTenants },
      rows_by_tenant: Object.fromEntries(Object.entries(c.byTenant).map(([tenant, n]) => [tenant, n.rows])),
      rows_by_check: c.rowsByCheck,
    };
    if (!flags.train) {
      printResult(flags, { ...dataResult, trained: false });
      return;
    }
    if (set.train.length === 0) throw new UsageError(`no example to train on: ${countsLine(set.counts)} — record more traffic with --record-content, lower --held-out, or pass --no-train`);
    const data = await readSftData(files.train);
    const trainDir = path.join(out, "train");
    const { metrics, adapter } = await withWorker({ ...flags, out: trainDir }, "sft", sftFingerprint(data), async (worker, options, load) => {
      const metrics = await trainSft(worker, { ...options, data });
      const probes = flags.check ? (await worker.renderChat(data.rows.slice(0, 4).map((r) => r.messages), false)).map((r) => r.tokens) : [];
      const adapter = await writeAdapterFiles(worker, load, { dir: out, dtype: "f16", checkOn: probes });
      return { metrics, adapter };
    });
    const gguf = "skipped" in adapter.gguf ? { gguf: null, gguf_skipped: adapter.gguf.skipped } : { gguf: adapter.gguf.path, gguf_check: adapter.gguf.check };
    if (!("skipped" in adapter.gguf)) await writeFileWhole(`${adapter.gguf.path}.json`, `${JSON.stringify({ run: trainDir, steps: metrics.at(-1)?.step ?? null, ...adapter.gguf }, null, 2)}\n`);
    else process.stderr.write(`no GGUF LoRA: ${adapter.gguf.skipped}\n`);
    printResult(flags, summarise(metrics, { ...dataResult, trained: true, ...gguf, peft: adapter.peft.path }));
  });
}

function countsLine(c: DistillCounts): string {
  const others = c.otherTenants === 0 ? "" : ` (${c.otherTenants} of other tenants left out unread)`;
  return `${c.episodes} requests${others}: ${c.passed} passed (${c.passedFirstDraft} on the first draft, ${c.passedAfterReflection} after reflection), ${c.duplicates} of them duplicates; left out ${c.failed} failed, ${c.unjudged} unjudged, ${c.vacuous} with only vacuous checks, ${c.noAnswer} without an answer → ${c.train} train, ${c.heldOut} held out; ${c.heldOutRequests} held-out requests to replay, any outcome`;
}

/** `--tenant NAME`, repeatable: each a tenant's name (src/core/tenant.ts). */
function collectTenant(name: string, names: string[]): string[] {
  if (!isTenantName(name)) throw new InvalidArgumentError(`not a tenant's name (1–64 letters, digits or . _ -, starting with a letter or digit), got ${JSON.stringify(name)}`);
  return names.includes(name) ? names : [...names, name];
}

/** Whose requests are trained on: the tenants named, or every one said outright; neither or both is a usage error. */
function tenantSelection(flags: Pick<DistillFlags, "tenant" | "allTenants">): TenantSelection {
  if (flags.allTenants && flags.tenant.length > 0) throw new UsageError("give --tenant NAME or --all-tenants, not both");
  if (flags.allTenants) return { kind: "all" };
  if (flags.tenant.length === 0) throw new UsageError("name whose traffic to train on: --tenant NAME (repeatable), or --all-tenants for every tenant's — a record of a shared gateway holds several tenants' requests");
  return { kind: "named", names: flags.tenant };
}
