import type { Split } from "./curate.js";

/**
 * ReflectEvo's training settings (Li et al. 2025) for the SFT sets: `one-stage` trains the reflection and the
 * corrected answer in one conversation; `two-stage-reflection` and `two-stage-correction` are the two stages of the
 * two-stage setting, trained one after the other. The DPO settings (on D± and on D_pref) are the pair sets exported
 * as `trl-dpo` or `openai-dpo`.
 */
export const trainingSettings = ["one-stage", "two-stage-reflection", "two-stage-correction"] as const;
export type TrainingSetting = (typeof trainingSettings)[number];
export type ExportSplit = Split | "all";
