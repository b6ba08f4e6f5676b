import { existsSync, statSync } from "node:fs";
import path from "node:path";
import { isTenantName } from "../core/tenant.js";
import { InputError } from "../errors.js";
import { summarize, type Summary } from "../eval/metrics.js";
import { instructionEfficacy, type InstructionEfficacy } from "./efficacy.js";
import { readGenerationFolder, readJsonFile } from "./generation-folder.js";
import { reflectionStatistics, type TaskStatistics } from "./stats.js";
import type { ReflectionDataItem } from "./types.js";
import type { Episode } from "../loops/types.js";
import { findLog, readLog } from "../record/log.js";

/** A `reflect eval` folder read back for a report: its episodes and the figures `summarize` computes from them. */
export interface EvalRun {
  kind: "eval";
  dir: string;
  /** A short name for legends: the folder's name, unless two runs share it. */
  label: string;
  task: string;
  model: string;
  strategy: string;
  turns: number;
  config: Record<string, unknown>;
  episodes: Episode[];
  /** `summarize(episodes, turns)`: the same function that wrote the run's summary.json. */
  summary: Summary;
  /** The runner's elapsed time from summary.json, when the run finished one. */
  wallSeconds: number | null;
  /** Set when the last line of episodes.jsonl had no newline (a run still going, or killed): it is left out. */
  partialLastLine: number | null;
  /** The items the run was started on (config.json), or null when the folder does not say. */
  plannedItems: number | null;
}

/** A `reflect data generate` folder read back for a report. */
export interface DataRun {
  kind: "data";
  dir: string;
  label: string;
  task: string;
  model: string;
  config: Record<string, unknown>;
  items: ReflectionDataItem[];
  statistics: TaskStatistics[];
  efficacy: InstructionEfficacy[];
  /** Instruction id → its text (the pool's and the run's own). */
  instructionText: Record<string, string>;
  /** The items the run was started on (config.json), or null when the folder does not say. */
  plannedItems: number | null;
}

export type RunFolder = EvalRun | DataRun;

/**
 * Reads a run folder without changing it: `episodes.jsonl` (reflect eval) or `samples.jsonl` (reflect data
 * generate), either of them gzip-compressed (`….jsonl.gz`) too, with `config.json` when present. Unlike a resume, a last line cut off by a kill — or still being written
 * by a live run — is left out and reported, never truncated away. Any other bad line is an InputError naming the
 * file and the line.
 */
export async function readRunFolder(dir: string): Promise<RunFolder> {
  const resolved = path.resolve(dir);
  if (!existsSync(resolved) || !statSync(resolved).isDirectory()) throw new InputError("not a folder — pass the folder of a run (`reflect eval --out DIR` or `reflect data generate --out DIR`)", resolved);
  const episodes = findLog(resolved, "episodes");
  if (episodes !== null) return readEvalRun(resolved, episodes);
  if (findLog(resolved, "samples") !== null) return readDataRun(resolved);
  throw new InputError("not a run folder: it has neither episodes.jsonl (`reflect eval --out DIR`) nor samples.jsonl (`reflect data generate --out DIR`)", resolved);
}

/** Reads several folders and gives each a distinct label (the folder name, with its parent where two collide). */
export async function readRunFolders(dirs: readonly string[]): Promise<RunFolder[]> {
  const runs: RunFolder[] = [];
  for (const dir of dirs) runs.push(await readRunFolder(dir));
  const names = runs.map((r) => path.basename(r.dir));
  runs.forEach((run, i) => {
    const name = names[i] as string;
    run.label = names.filter((n) => n === name).length > 1 ? `${path.basename(path.dirname(run.dir))}/${name}` : name;
  });
  return runs;
}

async function readEvalRun(dir: string, episodesFile: string): Promise<EvalRun> {
  const config = await optionalJson(path.join(dir, "config.json"));
  const { values: episodes, partialLastLine } = await readLog<Episode>(episodesFile, { noun: "episode", check: checkEpisode });
  const fingerprint = (config.fingerprint ?? {}) as Record<string, unknown>;
  const configuredTurns = Number(config.turns ?? fingerprint.turns);
  const turns = Number.isSafeInteger(configuredTurns) && configuredTurns > 0 ? configuredTurns : Math.max(1, ...episodes.map((e) => e.attempts.length));
  const summaryFile = await optionalJson(path.join(dir, "summary.json"));
  const first = episodes[0];
  return {
    kind: "eval",
    dir,
    label: path.basename(dir),
    task: String(config.task ?? first?.task ?? "?"),
    model: String(config.model_id ?? first?.model ?? config.model ?? "?"),
    // Episodes written before strategies had names came from reflect-retry (as metrics.ts assumes for stop reasons).
    strategy: String(config.strategy ?? first?.strategy ?? "reflect-retry"),
    turns,
    config,
    episodes,
    summary: summarize(episodes, turns),
    wallSeconds: typeof summaryFile.wall_seconds === "number" ? summaryFile.wall_seconds : null,
    partialLastLine,
    plannedItems: plannedItems(config.items ?? fingerprint.items),
  };
}

async function readDataRun(dir: string): Promise<DataRun> {
  const folder = await readGenerationFolder(dir);
  const items = folder.items.map(({ item }) => item);
  return {
    kind: "data",
    dir,
    label: path.basename(dir),
    task: String(folder.config.fingerprint.task ?? items[0]?.task ?? "?"),
    model: String(items[0]?.model ?? folder.config.model ?? "?"),
    config: folder.config,
    items,
    statistics: reflectionStatistics(items),
    efficacy: instructionEfficacy(items),
    instructionText: Object.fromEntries([...folder.instructions].map(([id, i]) => [id, i.text])),
    plannedItems: plannedItems((folder.config as Record<string, unknown>).items ?? folder.config.fingerprint.items),
  };
}

/** A count of planned items from config.json, or null when it holds none. */
function plannedItems(value: unknown): number | null {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0 ? value : null;
}

/** Episodes (or items) finished, and planned when the run stopped short of them (killed, or a run budget spent). */
export function unfinished(run: RunFolder): { done: number; planned: number } | null {
  const done = run.kind === "eval" ? run.episodes.length : run.items.length;
  return run.plannedItems !== null && done < run.plannedItems ? { done, planned: run.plannedItems } : null;
}

/** A JSON object file, `{}` when absent; an InputError naming it when it is not JSON. */
async function optionalJson(file: string): Promise<Record<string, unknown>> {
  if (!existsSync(file)) return {};
  const value = await readJsonFile(file, "a JSON object");
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new InputError("expected a JSON object", file);
  return value as Record<string, unknown>;
}

/** What the report and the viewer read of an episode; null when the value has it. */
export function checkEpisode(value: unknown): string | null {
  const e = value as Partial<Episode> | null;
  if (typeof e !== "object" || e === null || Array.isArray(e)) return "not an episode: expected a JSON object";
  if (typeof e.id !== "string") return "not an episode: no string `id`";
  if (!Array.isArray(e.attempts)) return `episode "${e.id}": no \`attempts\` array`;
  for (const [i, a] of e.attempts.entries()) {
    if (typeof a?.call?.output !== "string" || !Array.isArray(a.call.messages)) return `episode "${e.id}", attempt ${i + 1}: no \`call\` with \`messages\` and an \`output\` string`;
    if (typeof a.verdict !== "object" || a.verdict === null) return `episode "${e.id}", attempt ${i + 1}: no \`verdict\``;
    const trajectory = a.trajectory === undefined ? null : trajectoryProblem(a.trajectory);
    if (trajectory !== null) return `episode "${e.id}", attempt ${i + 1}: trajectory: ${trajectory}`;
  }
  if (typeof e.usage?.promptTokens !== "number" || typeof e.usage.completionTokens !== "number" || typeof e.usage.calls !== "number") return `episode "${e.id}": no \`usage\` with token and call counts`;
  if (typeof e.ms !== "number") return `episode "${e.id}": no \`ms\``;
  // What the arm report pairs and sums by: each a field of the type it is read as, when present.
  if (e.arm !== undefined && e.arm !== "base" && e.arm !== "adapter") return `episode "${e.id}": arm: expected base or adapter, got ${JSON.stringify(e.arm)}`;
  if (e.replayOf !== undefined && typeof e.replayOf !== "string") return `episode "${e.id}": replayOf: expected the replayed episode's id, a string`;
  if (e.tenant !== undefined && !isTenantName(e.tenant)) return `episode "${e.id}": tenant: expected a tenant's name, got ${JSON.stringify(e.tenant)}`;
  const reflection = (e.usageByRole as Record<string, unknown> | undefined)?.reflection as { calls?: unknown } | undefined;
  if (reflection !== undefined && typeof reflection?.calls !== "number") return `episode "${e.id}": usageByRole.reflection.calls: expected a number`;
  return null;
}

/** What is wrong with an attempt's `trajectory` (the `agent` strategy's steps), or null: what the exports read of each step. */
function trajectoryProblem(value: unknown): string | null {
  if (!Array.isArray(value)) return "expected an array of steps";
  for (const [k, step] of value.entries()) {
    const s = step as { output?: unknown; toolCalls?: unknown; observations?: unknown } | null;
    if (typeof s !== "object" || s === null || typeof s.output !== "string") return `step ${k + 1}: no \`output\` string`;
    if (!Array.isArray(s.toolCalls) || !s.toolCalls.every((c: { id?: unknown; name?: unknown; arguments?: unknown } | null) => typeof c?.id === "string" && typeof c.name === "string" && typeof c.arguments === "string")) return `step ${k + 1}: \`toolCalls\` must be calls with string id, name and arguments`;
    if (!Array.isArray(s.observations) || !s.observations.every((o: { callId?: unknown; content?: unknown; isError?: unknown } | null) => typeof o?.callId === "string" && typeof o.content === "string" && typeof o.isError === "boolean")) return `step ${k + 1}: \`observations\` must be observations with string callId and content and a boolean isError`;
  }
  return null;
}
