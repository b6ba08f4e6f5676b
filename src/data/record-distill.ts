import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { specVacuity } from "../critics/request/build.js";
import type { RequestRecord } from "../critics/request/request-task.js";
import { LOCAL_TENANT } from "../core/tenant.js";
import { InputError, RequestFieldError, UsageError } from "../errors.js";
import type { Episode } from "../loops/types.js";
import type { ChatMessage, TextMessage } from "../models/language-model.js";
import { messageAsText, promptedReplyText, withToolsPrompt } from "../models/prompted-tools.js";
import { checkFingerprint } from "../record/durable-run.js";
import { findLog, jsonlText, logText, writeFileWhole } from "../record/log.js";
import { isRedacted } from "../record/redact-episode.js";
import { readRequestEpisode } from "../record/request-episode.js";
import { hash32 } from "../util/hash.js";
import { recordDistillCard, shellCommand } from "./card.js";
import type { DistillCounts, DistillExample, DistillSelectOptions, DistillSet, DistillSourceSummary, DistillSplitOptions, HeldOutRequest, LeftOutReason } from "./distill-set.js";
import type { WeightedMessage } from "./export.js";
import { validateExportRow } from "./formats.js";
import { readRunFolder } from "./run-folder.js";

/**
 * One-pass training data from the gateway's own traffic (`reflect distill`): each recorded request whose returned
 * answer passed its checks becomes one example — the request's conversation → that verified answer — so an adapter
 * learns to give at once what the loop reached, and keeps what already passed on the first draft.
 *
 * Departure from ReflectEvo's distilled set (`reflect data curate`, set `distill`): there the refined answer comes from
 * a generation run on a task's items; here it is the answer the gateway returned and its checks passed, on the
 * application's own requests. No reflection text enters an example: the conversation is the request's, not the
 * loop's.
 */

/** The tenant an episode was recorded for: its `tenant`, or `local` for a record written before tenants. */
export const tenantOf = (episode: Pick<Episode, "tenant">): string => episode.tenant ?? LOCAL_TENANT;

/** A record folder read for distillation: its episodes and the file they came from (for errors naming a line). */
export interface DistillSource {
  summary: DistillSourceSummary;
  file: string;
  episodes: Episode[];
}

/**
 * Reads gateway record folders (`reflect serve --record DIR --record-content`, or the middleware's record writer). A
 * folder that is not a record, or a record made without content (nothing to train on), is refused naming the folder.
 */
export async function readDistillSources(dirs: readonly string[]): Promise<DistillSource[]> {
  if (dirs.length === 0) throw new UsageError("no record folder given — pass --from-record DIR, the folder of `reflect serve --record DIR --record-content`");
  const sources: DistillSource[] = [];
  for (const dir of dirs) {
    const run = await readRunFolder(dir).catch((error: unknown) => {
      if (InputError.isInstance(error) && /: not a folder/.test(error.message)) throw new UsageError(`${path.resolve(dir)} is not a folder — pass the folder of \`reflect serve --record DIR --record-content\``);
      if (InputError.isInstance(error) && /: not a run folder/.test(error.message)) throw new UsageError(`${path.resolve(dir)} is not a gateway record (no episodes.jsonl) — pass the folder of \`reflect serve --record DIR --record-content\``);
      throw error;
    });
    if (run.kind !== "eval" || run.config.record_format === undefined) throw new UsageError(`${run.dir} is not a gateway record (config.json has no record_format) — pass the folder of \`reflect serve --record DIR --record-content\``);
    if (run.config.record_content !== true || run.episodes.some(isRedacted)) throw new UsageError(`${run.dir} was recorded without request and reply text, so it holds no conversation to train on — record with \`reflect serve --record DIR --record-content\``);
    sources.push({
      file: findLog(run.dir, "episodes") ?? path.join(run.dir, "episodes.jsonl"),
      episodes: run.episodes,
      summary: {
        dir: run.dir,
        episodes: run.episodes.length,
        reflectkit: typeof run.config.reflectkit === "string" ? run.config.reflectkit : null,
        openedAt: typeof run.config.opened_at === "string" ? run.config.opened_at : null,
        partialLastLine: run.partialLastLine,
      },
    });
  }
  return sources;
}

/** What became of one recorded episode: an example, or why not. */
export function selectEpisode(episode: Episode, source: string, record: RequestRecord): DistillExample | Exclude<LeftOutReason, "duplicate"> {
  const attempt = episode.selected === null ? undefined : episode.attempts[episode.selected - 1];
  if (attempt === undefined) return "no-answer";
  const { judging, vacuous } = specVacuity(record.checks);
  if (judging.length === 0 && vacuous.length > 0) return "vacuous";
  const checks = attempt.checks;
  // Passed: the request's own checks passed it (the verdict) and no check the loop ran on it (a judge included) failed it.
  // A judge is not ground truth: an answer only a judge approved is unjudged.
  if (attempt.verdict.correct === true && checks.every((c) => c.pass !== false)) {
    const prompt = promptOf(record);
    return {
      id: episode.id,
      source,
      prompt,
      answer: promptedReplyText(attempt.call.output, attempt.call.toolCalls),
      firstDraft: episode.selected === 1,
      tenant: tenantOf(episode),
      checkedBy: [...new Set(checks.filter((c) => c.pass === true && !vacuous.includes(c.source)).map((c) => c.source))],
      record,
      model: attempt.call.model,
      key: keyOf(prompt),
    };
  }
  if (attempt.verdict.correct === false || checks.some((c) => c.pass === false)) return "failed";
  return "unjudged";
}

/**
 * The conversation as the model is shown it: the request's messages (tool turns as text), with the tools prompt where
 * it offered tools, asking for a call where the request forced one, as the embedded model is asked when serving it.
 */
function promptOf(record: RequestRecord): ChatMessage[] {
  const tools = record.checks.tools;
  if (tools === undefined || tools.length === 0) return record.messages.map(plain);
  return withToolsPrompt(record.messages, tools, record.checks.toolsRequired === true ? { type: "required" } : undefined);
}

const keyOf = (prompt: readonly ChatMessage[]): string => createHash("sha256").update(JSON.stringify(prompt)).digest("hex");

/**
 * Selects, deduplicates and splits the examples of record folders, in the order given. Deterministic: the same records,
 * share and seed give the same sets. Dedupe keeps the first example of a conversation in record order (folders in the
 * order given) and counts the rest; the split hashes the conversation with the seed, so a conversation is never on both
 * sides and a request keeps its side as the record grows.
 */
export function distillSet(sources: readonly DistillSource[], options: DistillSelectOptions): DistillSet {
  checkSplit(options);
  const counts: DistillCounts = { episodes: 0, passed: 0, passedFirstDraft: 0, passedAfterReflection: 0, failed: 0, unjudged: 0, vacuous: 0, otherTenants: 0, noAnswer: 0, duplicates: 0, train: 0, heldOut: 0, heldOutRequests: 0, byTenant: {}, rowsByCheck: {} };
  const chosen = options.tenants;
  const named = (tenant: string): boolean => chosen.kind === "all" || chosen.names.includes(tenant);
  if (chosen.kind === "named") for (const name of chosen.names) counts.byTenant[name] = { requests: 0, rows: 0 };
  const kept = new Map<string, DistillExample>();
  const heldOutRequests = new Map<string, HeldOutRequest>();
  const duplicates: DistillSet["duplicates"] = [];
  for (const source of sources) {
    source.episodes.forEach((raw, index) => {
      const where = { file: source.file, line: index + 1 };
      // Every field read below is checked first: a bad line is refused naming its file, line and field.
      const episode = readRequestEpisode(raw, where);
      const tenant = tenantOf(episode);
      if (!named(tenant)) {
        counts.otherTenants++;
        return;
      }
      counts.episodes++;
      const perTenant = (counts.byTenant[tenant] ??= { requests: 0, rows: 0 });
      perTenant.requests++;
      // The dialect and the request's options come along, so a held-out request replays as it was sent.
      const record = episode.record;
      let outcome: ReturnType<typeof selectEpisode>;
      try {
        outcome = selectEpisode(episode, source.summary.dir, record);
      } catch (error) {
        if (!RequestFieldError.isInstance(error)) throw error;
        throw new InputError(`episode "${episode.id}": record.checks: ${error.message} — the recorded check does not compile`, where.file, where.line);
      }
      const key = typeof outcome === "string" ? keyOf(promptOf(record)) : outcome.key;
      if (isHeldOut(key, options) && !heldOutRequests.has(key)) {
        heldOutRequests.set(key, { id: episode.id, source: source.summary.dir, record, model: typeof outcome === "string" ? episode.model : outcome.model, outcome: typeof outcome === "string" ? outcome : "passed", key });
      }
      if (outcome === "failed") counts.failed++;
      else if (outcome === "unjudged") counts.unjudged++;
      else if (outcome === "vacuous") counts.vacuous++;
      else if (outcome === "no-answer") counts.noAnswer++;
      else {
        counts.passed++;
        if (outcome.firstDraft) counts.passedFirstDraft++;
        else counts.passedAfterReflection++;
        const earlier = kept.get(outcome.key);
        if (earlier === undefined) kept.set(outcome.key, outcome);
        else {
          counts.duplicates++;
          duplicates.push({ dropped: exampleName(outcome, sources.length), kept: exampleName(earlier, sources.length) });
        }
      }
    });
  }
  const train: DistillExample[] = [];
  const heldOut: DistillExample[] = [];
  for (const example of kept.values()) {
    (isHeldOut(example.key, options) ? heldOut : train).push(example);
    (counts.byTenant[example.tenant] as { rows: number }).rows++;
    for (const kind of example.checkedBy) counts.rowsByCheck[kind] = (counts.rowsByCheck[kind] ?? 0) + 1;
  }
  counts.train = train.length;
  counts.heldOut = heldOut.length;
  counts.heldOutRequests = heldOutRequests.size;
  return { sources: sources.map((s) => s.summary), train, heldOut, heldOutRequests: [...heldOutRequests.values()], counts, duplicates };
}

/** Whether the conversation of `key` is held out: a hash of the seed and the key, uniform in [0, 1), below the share. */
export function isHeldOut(key: string, options: DistillSplitOptions): boolean {
  return hash32(`${options.seed}:${key}`) / 2 ** 32 < options.heldOut;
}

function checkSplit(options: DistillSplitOptions): void {
  if (!(options.heldOut >= 0 && options.heldOut < 1)) throw new UsageError(`--held-out ${options.heldOut}: give the share of requests held out, from 0 up to (not including) 1`);
  if (!Number.isSafeInteger(options.seed)) throw new UsageError(`--seed ${options.seed}: give an integer`);
}

/** An example's name in the card and in messages: its episode id, with its folder when several were read. */
function exampleName(example: DistillExample, sources: number): string {
  return sources > 1 ? `${path.basename(example.source)}/${example.id}` : example.id;
}

/** An example as a TRL conversational SFT row: the conversation (its assistant turns as context, weight 0), then the answer as the one trained turn. */
export function distillRow(example: DistillExample): { messages: WeightedMessage[] } {
  const context = example.prompt.map((m): WeightedMessage => (m.role === "assistant" ? { ...plain(m), weight: 0 } : plain(m)));
  return { messages: [...context, { role: "assistant", content: example.answer, weight: 1 }] };
}

export interface WriteDistillDataOptions extends DistillSelectOptions {
  /** Record folders, read in this order. */
  from: readonly string[];
  /** The run folder. */
  out: string;
  /** A held-out request as a replayable gateway request (the gateway's `replayRequest`), one line of `held-out-requests.jsonl`. */
  replayRequest: (request: Pick<HeldOutRequest, "id" | "record" | "model">) => object;
  /** The command line that made the run, for the card and config.json. */
  argv?: readonly string[];
  /** The wall clock of config.json's `made_at`. */
  clock?: () => Date;
}

export interface DistillDataResult {
  set: DistillSet;
  /** Files written, by role. */
  files: { train: string; heldOut: string; heldOutRequests: string; card: string; config: string };
}

/** Files of a distill run folder; training adds `train/`, `adapter.gguf` (+ `.json`) and `adapter-peft/`. */
const RUN_FILES = ["config.json", "train.jsonl", "held-out.jsonl", "held-out-requests.jsonl", "README.md", "train", "adapter.gguf", "adapter.gguf.json", "adapter-peft"];

/**
 * Writes a distill run's data: `train.jsonl` and `held-out.jsonl` (TRL conversational SFT, the answer the one trained
 * turn), `held-out-requests.jsonl` (the held-out requests as gateway requests, for `reflect replay`), the dataset card
 * `README.md` and `config.json` (options and a fingerprint of the data). Re-run on the same folder it rewrites the same
 * bytes and passes; a folder made from other data (the record grew, another split) or holding other files is refused
 * before anything is written, naming what differs — so training resumed in it trains on the data it started on.
 */
export async function writeDistillData(options: WriteDistillDataOptions): Promise<DistillDataResult> {
  checkSplit(options);
  const out = path.resolve(options.out);
  const sources = await readDistillSources(options.from);
  const set = distillSet(sources, options);
  const trainText = jsonlText(set.train.map(distillRow));
  const heldOutText = jsonlText(set.heldOut.map(distillRow));
  for (const [file, rows] of [["train.jsonl", set.train], ["held-out.jsonl", set.heldOut]] as const) {
    rows.forEach((example, i) => {
      const problem = validateExportRow("trl-sft", distillRow(example));
      if (problem !== null) throw new InputError(`episode "${example.id}" does not make a conversational SFT row (${problem})`, path.join(out, file), i + 1);
    });
  }
  const digest = (text: string) => createHash("sha256").update(text).digest("hex");
  const fingerprint = {
    kind: "distill",
    sources: sources.map((s) => s.summary.dir),
    held_out: options.heldOut,
    seed: options.seed,
    tenants: options.tenants.kind === "all" ? "all" : [...options.tenants.names].sort(),
    examples: { train: set.train.length, held_out: set.heldOut.length, held_out_requests: set.heldOutRequests.length },
    train_sha256: digest(trainText),
    held_out_sha256: digest(heldOutText),
  };
  await refuseForeign(out);
  await checkFingerprint(out, fingerprint).catch((error: unknown) => {
    if (!UsageError.isInstance(error)) throw error;
    throw new UsageError(`${error.message.replace(/ — pass another --out.*$/u, "")} — the records or the split changed since this run was made; pass another --out to distil them as they are now`);
  });
  await mkdir(out, { recursive: true });
  const argv = options.argv ?? null;
  const command = argv === null ? null : shellCommand(["reflect", ...argv]);
  const config = { kind: "distill", command, argv, made_at: (options.clock ?? (() => new Date()))().toISOString(), counts: set.counts, sources: set.sources, fingerprint };
  const files = {
    config: path.join(out, "config.json"),
    train: path.join(out, "train.jsonl"),
    heldOut: path.join(out, "held-out.jsonl"),
    heldOutRequests: path.join(out, "held-out-requests.jsonl"),
    card: path.join(out, "README.md"),
  };
  await writeFileWhole(files.config, `${JSON.stringify(config, null, 2)}\n`);
  await writeFileWhole(files.train, trainText);
  await writeFileWhole(files.heldOut, heldOutText);
  await writeFileWhole(files.heldOutRequests, logText(set.heldOutRequests.map(options.replayRequest), { noun: "request" }));
  await writeFileWhole(files.card, recordDistillCard({ set, options: { heldOut: options.heldOut, seed: options.seed, tenants: options.tenants }, command }));
  return { set, files };
}

/** Refuses a folder holding anything a distill run does not write (a `.partial` of a killed write aside). */
async function refuseForeign(out: string): Promise<void> {
  if (!existsSync(out)) return;
  const foreign = (await readdir(out)).filter((name) => !RUN_FILES.includes(name) && !name.endsWith(".partial"));
  if (foreign.length > 0) throw new UsageError(`${out} holds files a distill run does not write (${foreign.slice(0, 3).join(", ")}${foreign.length > 3 ? ", …" : ""}) — pass a new or empty folder as --out`);
}

function plain(message: ChatMessage): TextMessage {
  return messageAsText(message);
}
