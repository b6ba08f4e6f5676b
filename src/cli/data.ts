import os from "node:os";
import path from "node:path";
import type { Command } from "commander";
import { curateReflectionData, curatedSets, type CurationReport, type CuratedSet } from "../data/curate.js";
import { formatEfficacy } from "../data/efficacy.js";
import { trainingSettings, type ExportSplit, type TrainingSetting } from "../data/export-options.js";
import { exportReflectionData } from "../data/export.js";
import { exportFormats, type ExportFormat } from "../data/formats.js";
import { defaultFirstSampling, defaultGenerationReflectionSampling, GENERATION_TEMPERATURE, generateReflectionData } from "../data/generate.js";
import { recordSource, type RecordSource } from "../data/record-source.js";
import type { RequestRecord } from "../critics/request/request-task.js";
import { buildRequestChecks } from "../critics/request/build.js";
import { UsageError } from "../errors.js";
import { formatStatistics, generationStats } from "../data/stats.js";
import { instructionPool, loadInstructions } from "../data/instructions.js";
import type { ReflectionDataSummary } from "../data/types.js";
import type { FeedbackMode } from "../loops/feedback.js";
import { openModel, type OpenModelOptions } from "../models/open.js";
import type { Judgement, Task, TaskItem } from "../tasks/task.js";
import { reflectkitVersion } from "../version.js";
import { interruptSignal, modelFlags, modelOpenOptions, taskFlags, taskRun, type TaskRunFlags } from "./task-run.js";
import { choice, int, nonNegativeNumber } from "./parse.js";
import { episodeProgress } from "./episode-progress.js";

interface GenerateFlags extends Omit<TaskRunFlags, "task"> {
  task?: string;
  fromRecord?: string;
  instructions?: string;
  instructionsPerItem: number;
  samples: number;
  feedback: FeedbackMode;
  temperature: number;
  firstTemperature: number;
  topP?: number;
  maxTokens: number;
  reflectionMaxTokens: number;
  out: string;
  json: boolean;
}

/** The model flags (`modelFlags`) open the judge. */
interface CurateFlags extends Pick<TaskRunFlags, "concurrency" | "threads" | "contextSize" | "prefixReuse" | "offline" | "apiKeyEnv" | "timeout"> {
  in: string;
  out: string;
  testShare: number;
  seed: number;
  judgeModel?: string;
  maxPairsPerItem: number;
  json: boolean;
}

interface ExportFlags {
  in: string;
  set: CuratedSet;
  format: ExportFormat;
  setting?: TrainingSetting;
  split: ExportSplit;
  out: string;
}

/** `reflect data …`: the reflection-data pipeline (ReflectEvo). */
export function registerData(program: Command): void {
  const data = program.command("data").description("reflection data for training (ReflectEvo): the instruction pool, generation, statistics, curation, exports");
  data
    .command("instructions")
    .description("list the 32 reflection instructions (verify × error focus × plan), and your own with --add")
    .option("--add <file>", "your own instructions: a JSON array or JSON lines of {id, text}")
    .option("--json", "print a JSON array of the instruction objects", false)
    .action((flags: { add?: string; json: boolean }) => {
      const pool = instructionPool();
      const all = [...pool, ...(flags.add === undefined ? [] : loadInstructions(flags.add, pool))];
      if (flags.json) {
        process.stdout.write(`${JSON.stringify(all, null, 2)}\n`);
        return;
      }
      for (const instruction of all) process.stdout.write(`${instruction.id}\n  ${instruction.text}\n`);
    });
  const generate = taskFlags(
    data.command("generate").description("first answers; for each wrong one, reflections under drawn instructions and the retries they lead to (ReflectEvo)"),
    "seed for generated items, instruction draws and sampling",
    false,
  )
    .option("--from-record <dir>", "instead of --task: a gateway record (`reflect serve --record DIR --record-content`); each request whose first draft failed its checks is an item, its recorded draft the first answer, its own checks the verifier")
    .option("--instructions <file>", "your own instructions (a JSON array or JSON lines of {id, text}), used for every failed item besides the drawn ones")
    .option("--instructions-per-item <k>", "instructions drawn from the pool of 32 for each failed item, without replacement", int(0), 4)
    .option("--samples <n>", "reflection-and-retry samples per instruction", int(1), 2)
    .option("--feedback <mode>", "what the model is told about a wrong first answer: binary (only that it is wrong) or detailed (the verifier's words)", choice(["binary", "detailed"]), "binary")
    .option("--temperature <t>", "sampling temperature of reflections and retries", nonNegativeNumber, GENERATION_TEMPERATURE)
    .option("--first-temperature <t>", "sampling temperature of first answers (0 = greedy)", nonNegativeNumber, 0)
    .option("--top-p <p>", "nucleus sampling", nonNegativeNumber)
    .option("--max-tokens <n>", "token limit of a first answer or a retry (reflect eval's)", int(1), defaultFirstSampling.maxTokens)
    .option("--reflection-max-tokens <n>", "token limit of a reflection (reflect eval's)", int(1), defaultGenerationReflectionSampling.maxTokens);
  modelFlags(generate, "items")
    .requiredOption("--out <dir>", "run folder: samples.jsonl, config.json, summary.json; an existing folder with the same flags is resumed")
    .option("--json", "print summary.json instead of the table", false)
    .action(async (flags: GenerateFlags) => {
      if (flags.fromRecord !== undefined && (flags.task !== undefined || flags.data !== undefined)) throw new UsageError("--from-record takes the items and their checks from the record — leave out --task and --data");
      if (flags.fromRecord === undefined && flags.task === undefined) throw new UsageError("required option '--task <name>' not specified (or --from-record DIR: a gateway record)");
      const source = flags.fromRecord === undefined ? undefined : await recordSource(path.resolve(flags.fromRecord), (spec) => buildRequestChecks(spec));
      const { task, items, concurrency, openOptions } = source === undefined ? await taskRun(flags as TaskRunFlags) : recordRun(flags, source);
      const instructions = flags.instructions === undefined ? [] : loadInstructions(flags.instructions);
      const outDir = path.resolve(flags.out);
      const sampling = (maxTokens: number, temperature: number) => ({ maxTokens, temperature, ...(flags.topP === undefined ? {} : { topP: flags.topP }) });
      const model = await openModel(flags.model, openOptions);
      const interrupt = interruptSignal(outDir, "items");
      const bar = episodeProgress({ total: items.length, noun: "items", rightLabel: "first answer right" });
      try {
        const { summary, resumed } = await generateReflectionData({
          model,
          task,
          items,
          outDir,
          instructions,
          instructionsPerItem: flags.instructionsPerItem,
          samples: flags.samples,
          feedback: flags.feedback,
          first: sampling(flags.maxTokens, flags.firstTemperature),
          reflection: sampling(flags.reflectionMaxTokens, flags.temperature),
          retry: sampling(flags.maxTokens, flags.temperature),
          seed: flags.seed,
          concurrency,
          // The user's instructions themselves are part of the library's fingerprint, wherever their file lies.
          fingerprint: source === undefined ? { mode: flags.mode, data: flags.data === undefined ? null : path.resolve(flags.data) } : { from_record: path.resolve(flags.fromRecord as string) },
          ...(source === undefined ? {} : { firstAnswers: (item) => source.firstAnswers(item as TaskItem<RequestRecord>), requestFormat: (item) => source.requestFormat(item as TaskItem<RequestRecord>) }),
          config: {
            reflectkit: reflectkitVersion,
            model_spec: flags.model,
            instructions_file: flags.instructions === undefined ? null : path.resolve(flags.instructions),
            threads: flags.threads ?? os.availableParallelism(),
            context_size: flags.contextSize,
            prefix_reuse: flags.prefixReuse,
            argv: process.argv.slice(2),
          },
          signal: interrupt.signal,
          onItem: (item, fromDisk) => bar.tick(item.first?.verdict.correct === true, fromDisk),
        });
        bar.stop();
        if (flags.json) process.stdout.write(`${JSON.stringify(summary, null, 2)}\n`);
        else {
          const from = source === undefined ? "" : ` · from ${source.items.length} failed first drafts of ${source.episodes} recorded requests`;
          const heading = `reflect data generate · ${task.name}${from} · ${model.modelId} · ${flags.instructionsPerItem} drawn${instructions.length > 0 ? ` + ${instructions.length} own` : ""} instructions × ${flags.samples} samples · ${flags.feedback} feedback${resumed > 0 ? ` · ${resumed} items resumed from disk` : ""}`;
          process.stdout.write(`${formatGenerationSummary(summary, heading)}\nrun folder: ${outDir}\n`);
        }
      } finally {
        bar.stop();
        interrupt.release();
        await model.close();
      }
    });
  registerStats(data);
  registerCurate(data);
  registerExport(data);
}

/** A record's items (the first `--limit`) and how to open the model, as `taskRun` gives them for a task. */
function recordRun(flags: GenerateFlags, source: RecordSource): { task: Task<unknown, Judgement>; items: TaskItem<unknown>[]; concurrency: number; openOptions: OpenModelOptions } {
  const openOptions = modelOpenOptions(flags, flags.model);
  // The CLI runs every task untyped, as `taskRun` returns them.
  const task = source.task as Task<unknown, Judgement>;
  return { task, items: flags.limit === undefined ? source.items : source.items.slice(0, flags.limit), concurrency: openOptions.parallel as number, openOptions };
}

function registerStats(data: Command): void {
  data
    .command("stats")
    .description("a generation folder's statistics (ReflectEvo's Table 1) and which instructions most often lead to a correct retry")
    .requiredOption("--in <dir>", "a `reflect data generate` folder")
    .option("--json", "print {statistics, efficacy} as JSON", false)
    .action(async (flags: { in: string; json: boolean }) => {
      const stats = await generationStats(path.resolve(flags.in));
      if (flags.json) process.stdout.write(`${JSON.stringify(stats, null, 2)}\n`);
      else process.stdout.write(`${formatStatistics(stats.statistics)}\n\nper-instruction efficacy (Wilson 95% intervals), best first:\n${formatEfficacy(stats.efficacy)}\n`);
    });
}

function registerCurate(data: Command): void {
  const curate = data
    .command("curate")
    .description("D+ (reflections that led to a correct retry), D± pairs, D_pref with a judge, distilled triples; a seeded train/test split by item (ReflectEvo)")
    .requiredOption("--in <dir>", "a `reflect data generate` folder")
    .requiredOption("--out <dir>", "folder for d_plus.jsonl, d_pm.jsonl, d_pref.jsonl (with a judge), distill.jsonl and curation.json")
    .option("--test-share <share>", "share of the items in the test split", nonNegativeNumber, 0.1)
    .option("--seed <n>", "seed of the split and of the choice of pairs", int(0), 0)
    .option("--judge-model <spec>", "a judge that orders pairs of reflections for D_pref: registered name, path to a .gguf, http(s)://host/v1#model, or provider:model")
    .option("--max-pairs-per-item <n>", "at most this many D± pairs, and D_pref comparisons, per item", int(1), 4);
  modelFlags(curate, "judge calls")
    .option("--json", "print curation.json instead of the table", false)
    .action(async (flags: CurateFlags) => {
      const judge = flags.judgeModel === undefined ? undefined : await openModel(flags.judgeModel, modelOpenOptions(flags, flags.judgeModel));
      try {
        const { report } = await curateReflectionData({
          inDir: path.resolve(flags.in),
          outDir: path.resolve(flags.out),
          testShare: flags.testShare,
          seed: flags.seed,
          maxPairsPerItem: flags.maxPairsPerItem,
          ...(judge === undefined ? {} : { judge }),
          ...(flags.concurrency === undefined ? {} : { concurrency: flags.concurrency }),
          config: { reflectkit: reflectkitVersion, judge_spec: flags.judgeModel ?? null, argv: process.argv.slice(2) },
        });
        process.stdout.write(flags.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatCuration(report)}\ncurated folder: ${path.resolve(flags.out)}\n`);
      } finally {
        await judge?.close();
      }
    });
}

/** The counts of curation.json as a readable table. */
export function formatCuration(report: CurationReport): string {
  const lines = [`items ${report.items.total}: with reflections ${report.items.reflected} (train ${report.items.train}, test ${report.items.test})`, "", "set       train   test"];
  for (const [set, counts] of Object.entries(report.counts)) lines.push(`${set.padEnd(8)} ${String(counts?.train ?? 0).padStart(6)} ${String(counts?.test ?? 0).padStart(6)}`);
  const d = report.duplicates_dropped;
  lines.push("", `duplicates dropped: d_plus ${d.d_plus}, d_pm ${d.d_pm}, d_pref ${d.d_pref}; pairs with the same reflection ${report.same_reflection_pairs_dropped}`);
  const j = report.judge;
  if (j !== null) lines.push(`judge ${j.model}: ${j.pairs_compared} pairs in both orders, agreed ${j.agreed}, disagreed ${j.disagreed}, unreadable ${j.unreadable}; first position chosen ${j.first_position_share === null ? "n/a" : `${(100 * j.first_position_share).toFixed(1)}%`}`);
  return lines.join("\n");
}

function registerExport(data: Command): void {
  data
    .command("export")
    .description("one curated set in a training format, with a dataset card beside it")
    .requiredOption("--in <dir>", "a `reflect data curate` folder")
    .requiredOption("--set <set>", `${curatedSets.join(", ")}`, choice(curatedSets))
    .requiredOption("--format <format>", "trl-sft, openai-sft (d_plus, distill); trl-dpo, openai-dpo (d_pm, d_pref); parquet (any)", choice(exportFormats))
    .option("--setting <setting>", "d_plus and distill: one-stage (default), two-stage-reflection or two-stage-correction", choice(trainingSettings))
    .option("--split <split>", "train, test or all", choice(["train", "test", "all"]), "train")
    .requiredOption("--out <file>", "the exported file; its card is README.md beside it, or <file>.README.md when the folder holds other files")
    .action(async (flags: ExportFlags) => {
      const result = await exportReflectionData({ inDir: path.resolve(flags.in), set: flags.set, format: flags.format, ...(flags.setting === undefined ? {} : { setting: flags.setting }), split: flags.split, outFile: path.resolve(flags.out) });
      process.stdout.write(`${result.rows} rows of ${flags.set} (${flags.split}) as ${flags.format}: ${result.file}\ndataset card: ${result.card}\n`);
    });
}

const pct = (part: number, whole: number) => (whole === 0 ? "n/a" : `${((100 * part) / whole).toFixed(1)}%`);

/** The summary of a generation run as a readable table. */
export function formatGenerationSummary(summary: ReflectionDataSummary, heading: string): string {
  const lines = [
    heading,
    "",
    `items ${summary.items}: first answer right ${summary.first_correct} (${pct(summary.first_correct, summary.items)}), wrong ${summary.failures}, not judged ${summary.unjudged}, ended by an error ${summary.errors}`,
    `reflections ${summary.reflections}, retries ${summary.retries}, right after reflection ${summary.retries_correct} (${pct(summary.retries_correct, summary.retries)})`,
  ];
  const instructions = Object.entries(summary.by_instruction);
  if (instructions.length > 0) {
    const width = Math.max(...instructions.map(([id]) => id.length));
    lines.push("", `${"instruction".padEnd(width)}  right/retries`);
    for (const [id, { correct, total }] of instructions) lines.push(`${id.padEnd(width)}  ${`${correct}/${total}`.padStart(13)}`);
  }
  const { usage } = summary;
  lines.push("", `model calls ${usage.calls}   tokens: prompt ${usage.prompt_tokens} (evaluated ${usage.evaluated_prompt_tokens}), completion ${usage.completion_tokens}   wall ${summary.wall_seconds.toFixed(1)} s`);
  return lines.join("\n");
}
