import { existsSync } from "node:fs";
import { readdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { writeFileWhole } from "../record/log.js";
import type { CuratedSet, CurationReport } from "./curate.js";
import type { DistillSelectOptions, DistillSet } from "./distill-set.js";
import { percent } from "./efficacy.js";
import type { ExportSplit, TrainingSetting } from "./export-options.js";
import type { ExportFormat } from "./formats.js";
import { statisticsCells } from "./stats.js";

export interface DatasetCardInput {
  /** The exported file. */
  file: string;
  set: CuratedSet;
  format: ExportFormat;
  setting?: TrainingSetting;
  split: ExportSplit;
  rows: number;
  /** What a row holds (`describeExport`). */
  description: string;
  curation: CurationReport;
  /** The command that made the export. */
  command: string;
}

/** The first line of every card: names the file it describes, so a later export into the same folder can tell. */
const MARK = "<!-- reflectkit dataset card for: ";
const marker = (file: string) => `${MARK}${path.basename(file)} -->`;

/**
 * Where the card of `file` goes: `README.md` beside it while the folder holds no other file (cards aside), else
 * `<file name>.README.md`, so several exports in one folder keep one card each. A README.md that is not a reflectkit
 * card is never overwritten. When an export joins a folder whose README.md is another export's card, that card moves
 * to `<its file>.README.md`; `moves` lists such renames (done by `writeDatasetCard`).
 */
export async function cardFile(file: string): Promise<{ card: string; moves: [string, string][]; stale: string[] }> {
  const dir = path.dirname(path.resolve(file));
  const base = path.basename(file);
  const readme = path.join(dir, "README.md");
  const own = path.join(dir, `${base}.README.md`);
  const isCard = (name: string) => name === "README.md" || name.endsWith(".README.md");
  const others = (await readdir(dir)).filter((name) => name !== base && !isCard(name) && !name.endsWith(".partial"));
  const readmeFor = existsSync(readme) ? cardSubject(await readFile(readme, "utf8")) : undefined;
  const userReadme = existsSync(readme) && readmeFor === null;
  if (others.length === 0 && !userReadme) return { card: readme, moves: [], stale: existsSync(own) ? [own] : [] };
  const moves: [string, string][] = readmeFor !== undefined && readmeFor !== null && readmeFor !== base && others.includes(readmeFor) ? [[readme, path.join(dir, `${readmeFor}.README.md`)]] : [];
  const stale = readmeFor === base ? [readme] : [];
  return { card: own, moves, stale };
}

/** The file a card names on its first line; null for a README.md that is not a reflectkit card. */
function cardSubject(text: string): string | null {
  const first = text.split("\n", 1)[0] ?? "";
  return first.startsWith(MARK) && first.endsWith(" -->") ? first.slice(MARK.length, -" -->".length) : null;
}

/** Writes the dataset card of an export (see `cardFile` for its name) and returns its path. */
export async function writeDatasetCard(input: DatasetCardInput): Promise<string> {
  const { card, moves, stale } = await cardFile(input.file);
  for (const [from, to] of moves) await rename(from, to);
  for (const file of stale) await rm(file, { force: true });
  await writeFileWhole(card, datasetCard(input));
  return card;
}

/** The dataset card as Markdown. */
export function datasetCard(input: DatasetCardInput): string {
  const { curation } = input;
  const name = path.basename(input.file);
  const generation = curation.generation;
  const generationArgv = Array.isArray(generation.argv) ? shellCommand(["reflect", ...generation.argv]) : "(not recorded: the run was made through the library)";
  const curationArgv = Array.isArray(curation.config.argv) ? shellCommand(["reflect", ...(curation.config.argv as string[])]) : "(not recorded: curated through the library)";
  const stats = statisticsCells(curation.statistics);
  const judge = curation.judge;
  const lines = [
    marker(name),
    `# ${name}`,
    "",
    `Reflection data in the manner of ReflectEvo (Li et al. 2025), made with reflectkit: the set **${input.set}** as **${input.format}**${input.setting === undefined ? "" : `, setting **${input.setting}**`}, split **${input.split}** — **${input.rows} rows**.`,
    "",
    "## What a row holds",
    "",
    input.description,
    "",
    "## Statistics",
    "",
    "In the shape of ReflectEvo's Table 1, over the whole generation run (every split). Reflection samples: reflections written; Q&A-reflection samples: D+ rows; % correct after reflection: retries the verifier judged correct. Lengths are averages in words (whitespace-separated) over the reflection samples whose retry was made; the question is the task's prompt without the thought request.",
    "",
    ...markdownTable(stats.header, stats.rows),
    "",
    "## Curation",
    "",
    `Split by a hash of the item id and seed ${curation.options.seed}, test share ${curation.options.test_share}: every row of an item is in the same split, so no question is in both. At most ${curation.options.max_pairs_per_item} pairs per item. Items: ${curation.items.total} read, ${curation.items.reflected} with reflections (${curation.items.train} train, ${curation.items.test} test).`,
    "",
    ...markdownTable(
      ["set", "train", "test"],
      Object.entries(curation.counts).map(([set, counts]) => [set, String(counts?.train ?? 0), String(counts?.test ?? 0)]),
    ),
    "",
    `Duplicates dropped: D+ rows ${curation.duplicates_dropped.d_plus} (same item, reflection and corrected answer), D± pairs ${curation.duplicates_dropped.d_pm}, D_pref reflections ${curation.duplicates_dropped.d_pref} (same text on the same item); D± pairs whose two reflections are the same text: ${curation.same_reflection_pairs_dropped}.`,
    "",
    judge === null
      ? "No judge: D_pref was not made."
      : `Judge ${judge.model}: ${judge.pairs_compared} pairs asked in both orders; kept ${judge.agreed} where both orders agreed (agreement ${percent(judge.agreement)}), dropped ${judge.disagreed} that disagreed and ${judge.unreadable} with an unreadable reply; the first-shown reflection was chosen in ${percent(judge.first_position_share)} of the readable replies.`,
    "",
    "## Instructions",
    "",
    "The reflection instructions the samples were written under (ReflectEvo's pool: verify × error focus × plan, and the run's own).",
    "",
    ...markdownTable(
      ["id", "text"],
      curation.instructions.map((i) => [`\`${i.id}\``, i.text]),
    ),
    "",
    "## Per-instruction efficacy",
    "",
    "Retries judged correct after a reflection under each instruction, with a Wilson 95% interval; best first.",
    "",
    ...markdownTable(
      ["instruction", "right / retries", "rate", "95% interval"],
      curation.efficacy.map((e) => [`\`${e.instruction}\``, `${e.correct} / ${e.total}`, percent(e.rate), e.total === 0 ? "" : `${percent(e.ci95[0])} – ${percent(e.ci95[1])}`]),
    ),
    "",
    "## Model",
    "",
    `Generator: \`${String(generation.model ?? "unknown")}\`${generation.model_spec === undefined ? "" : ` (\`--model ${String(generation.model_spec)}\`)`}. ${judge === null ? "No judge." : `Judge: \`${judge.model}\`.`}`,
    "",
    "## How it was made",
    "",
    "Generation:",
    "",
    "```sh",
    generationArgv,
    "```",
    "",
    "<details><summary>the generation's config.json</summary>",
    "",
    "```json",
    JSON.stringify(generation, null, 2),
    "```",
    "",
    "</details>",
    "",
    "Curation:",
    "",
    "```sh",
    curationArgv,
    "```",
    "",
    "Export:",
    "",
    "```sh",
    input.command,
    "```",
    "",
  ];
  return lines.join("\n");
}

/** What the card of a distill run (`reflect distill`, `RUN/README.md`) is made from. */
export interface RecordDistillCardInput {
  set: DistillSet;
  options: DistillSelectOptions;
  /** The command that made the run; null when made through the library. */
  command: string | null;
}

/** The dataset card of a distill run: sources, what was kept and left out and why, the split, dedupe, format, license. */
export function recordDistillCard(input: RecordDistillCardInput): string {
  const { set, options } = input;
  const c = set.counts;
  const shown = set.duplicates.slice(0, 10);
  const lines = [
    marker("train.jsonl"),
    "# One-pass training data from a gateway record",
    "",
    `Made with reflectkit's \`reflect distill\` from the application's own traffic through \`reflect serve\`: each request whose returned answer passed its checks is one example — the request's conversation → that verified answer. **${c.train} train** and **${c.heldOut} held-out** examples.`,
    "",
    "## What a row holds",
    "",
    'TRL conversational format, one JSON object a line: `{"messages": [...]}` — the request\'s messages as recorded (system included), then the answer as the one assistant message with `weight` 1; assistant turns of the request\'s own history carry `weight` 0 (context). The reflection conversation of a request that needed one is not in the row: the row is the one pass the adapter should make.',
    "",
    "- A request that offered tools: the conversation starts with the tools prompt the embedded engine shows the model (the functions inside `<tools>`), and the answer's tool calls follow its text as one `<tool_call>` block holding a JSON list of `{\"name\", \"arguments\"}` — the form that prompt asks for.",
    "- A request with a JSON schema: the answer is the JSON text the schema check passed.",
    "",
    "## Sources",
    "",
    ...markdownTable(
      ["record", "episodes", "recorded by", "opened"],
      set.sources.map((s) => [`\`${path.basename(s.dir)}\``, `${s.episodes}${s.partialLastLine === null ? "" : ` (line ${s.partialLastLine}, still being written, left out)`}`, s.reflectkit === null ? "" : `reflectkit ${s.reflectkit}`, s.openedAt ?? ""]),
    ),
    "",
    "## Kept and left out",
    "",
    ...markdownTable(
      ["requests", "count", "why"],
      [
        ["recorded", String(c.episodes), ""],
        ["passed on the first draft", String(c.passedFirstDraft), "kept: the adapter must keep what already works"],
        ["passed after reflection", String(c.passedAfterReflection), "kept: the answer the loop reached, as a first answer"],
        ["failed", String(c.failed), "left out: the returned answer failed a check"],
        ["unjudged", String(c.unjudged), "left out: none of the request's own checks judged the returned answer (a judge's approval alone does not count)"],
        ["vacuous checks", String(c.vacuous), "left out: the request's only checks cannot fail (a regex that matches the empty reply, a schema that accepts every value), so a pass verified nothing"],
        ["no answer", String(c.noAnswer), "left out: the request ended with no answer (an upstream error)"],
        ["duplicates", String(c.duplicates), "left out: the same conversation as an example kept"],
      ],
    ),
    "",
    "## Tenants",
    "",
    `${options.tenants.kind === "all" ? "Every tenant's traffic (`--all-tenants`)." : `Only the traffic of the tenants named with \`--tenant\`: ${options.tenants.names.map((n) => `\`${n}\``).join(", ")}.`} An episode's tenant is the one its record names (a record written before tenants names none: \`local\`).${c.otherTenants === 0 ? "" : ` ${c.otherTenants} requests of other tenants were left out unread.`}`,
    "",
    ...markdownTable(
      ["tenant", "requests", "rows"],
      Object.entries(c.byTenant)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([tenant, n]) => [`\`${tenant}\``, String(n.requests), String(n.rows)]),
    ),
    "",
    "## Rows by kind of check",
    "",
    "The kinds of check that passed each row's answer (train and held out); a row two kinds passed counts under each. A judge's approval is listed, but never made a row on its own.",
    "",
    ...markdownTable(
      ["check", "rows"],
      Object.entries(c.rowsByCheck)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
        .map(([kind, n]) => [kind, String(n)]),
    ),
    "",
    `Dedupe: two requests with the same conversation (the messages and the tools prompt, byte for byte) make one example — the first in record order (records in the order given) is kept, the later ones are counted above.${shown.length === 0 ? "" : ` Left out: ${shown.map((d) => `\`${d.dropped}\` (kept \`${d.kept}\`)`).join(", ")}${set.duplicates.length > shown.length ? `, and ${set.duplicates.length - shown.length} more` : ""}.`}`,
    "",
    "## Split",
    "",
    `By request: a hash of the conversation with seed ${options.seed} puts a share of ${options.heldOut} of the conversations in \`held-out.jsonl\` and the rest in \`train.jsonl\`, so no conversation is on both sides, and a request keeps its side when the record grows. \`held-out-requests.jsonl\` holds every request on the held-out side as a gateway request again — ${c.heldOutRequests}, those whose answer failed or could not be judged included, so arms are compared on the traffic as it came — each with its dialect, route and a body carrying the same checks in \`reflect\`, for \`reflect replay\` to send to a gateway serving the adapter.`,
    "",
    "## License",
    "",
    "The rows are the application's own traffic: its users' requests and the answers its gateway returned. Whoever runs the gateway decides whether they may be trained on and shared; they are under the terms that govern that traffic, not reflectkit's license. Check them for personal data before sharing them.",
    "",
    "## How it was made",
    "",
    "```sh",
    input.command ?? "(not recorded: made through the library)",
    "```",
    "",
  ];
  return lines.join("\n");
}

function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string[] {
  const cell = (text: string) => text.replace(/\|/gu, "\\|").replace(/\s*\n\s*/gu, " ");
  const line = (cells: readonly string[]) => `| ${cells.map(cell).join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...(rows.length === 0 ? [line(header.map((_, i) => (i === 0 ? "(none)" : "")))] : rows.map(line))];
}

/** Words joined into a POSIX shell command line, quoted where needed. */
export function shellCommand(words: readonly string[]): string {
  return words.map((w) => (/^[\w@%+=:,./-]+$/u.test(w) ? w : `'${w.replace(/'/gu, `'\\''`)}'`)).join(" ");
}
