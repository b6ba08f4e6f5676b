import { existsSync, statSync } from "node:fs";
import { UsageError } from "../errors.js";
import { donorReflections, type DonorReflections } from "../loops/donor-reflections.js";
import { findLog } from "../record/log.js";
import { readEpisodes } from "./run.js";

/**
 * The donor run of `--reflection placebo-other` (`--placebo-from DIR`): its episodes read as a run folder's are, its
 * texts checked against this run (`donorReflections`). A path that is no folder, or a folder with no episode log, is a
 * usage error naming the path.
 */
export async function readDonorRun(dir: string, expect: { task: string; strategy: string; items: readonly string[] }): Promise<DonorReflections> {
  if (!existsSync(dir)) throw new UsageError(`--placebo-from ${dir}: no such folder; give the run folder of a \`reflect eval --reflection model\` run of the same task and model`);
  if (!statSync(dir).isDirectory()) throw new UsageError(`--placebo-from ${dir}: not a folder; give a run folder (the one holding episodes.jsonl)`);
  if (findLog(dir, "episodes") === null) throw new UsageError(`--placebo-from ${dir}: no episodes.jsonl there, so it is no \`reflect eval\` run folder`);
  return donorReflections(await readEpisodes(dir), { dir, ...expect });
}
