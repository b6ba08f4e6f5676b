/**
 * `reflectkit/data`: the reflection-data pipeline — generate reflections, curate them into sets, export them in the
 * training formats, and read the run folders they come from.
 */
export { instructionPool, loadInstructions, type ReflectionInstruction } from "./instructions.js";
export { generateReflectionData, summarizeReflectionData, sampleInstructions, callSeed, firstAnswerPrompt, instructedReflectionRequest, thoughtRequest, type GenerateReflectionDataOptions, type GenerateReflectionDataResult } from "./generate.js";
export type { ReflectionDataItem, ReflectionSample, ReflectionDataSummary } from "./types.js";
export {
  curateReflectionData,
  splitOf,
  curatedSets,
  type CurateReflectionDataOptions,
  type CurationResult,
  type CurationReport,
  type JudgeAgreement,
  type CuratedSet,
  type Split,
  type AttemptContext,
  type ReflectionTurn,
  type DPlusRow,
  type PairRow,
  type PreferenceRow,
  type DistillRow,
} from "./curate.js";
export {
  exportReflectionData,
  checkCombination,
  sftConversation,
  distillConversation,
  preferenceConversation,
  describeExport,
  type ExportReflectionDataOptions,
  type ExportResult,
  type WeightedMessage,
  type PreferenceConversation,
} from "./export.js";
export { trainingSettings, type ExportSplit, type TrainingSetting } from "./export-options.js";
export { exportFormats, formatSchemas, parquetColumns, validateExportRow, validateExportFile, type ExportFormat } from "./formats.js";
export { datasetCard, writeDatasetCard, cardFile, type DatasetCardInput } from "./card.js";
export { writeDistillData, distillSet, distillRow, readDistillSources, type WriteDistillDataOptions, type DistillDataResult } from "./record-distill.js";
export type { DistillExample, DistillSet, DistillCounts } from "./distill-set.js";
export { instructionEfficacy, formatEfficacy, type InstructionEfficacy } from "./efficacy.js";
export { reflectionStatistics, generationStats, formatStatistics, wordCount, type TaskStatistics } from "./stats.js";
export { compareReflections, preferenceSchema, parsePreference, type PairComparison, type Preference } from "./preference-judge.js";
export { readGenerationFolder, type GenerationFolder, type GenerationConfig } from "./generation-folder.js";
export { readRunFolder, readRunFolders, type RunFolder, type EvalRun, type DataRun } from "./run-folder.js";
export { recordSource, type RecordSource } from "./record-source.js";
