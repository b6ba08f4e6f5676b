/**
 * `reflectkit/report`: a run's HTML report, the local viewer, and the comparisons and breakdowns they show.
 */
export { buildReport, type Report } from "./report-html.js";
export { writeReport, type ReportOptions, type ReportResult, type PngPolicy } from "./write-report.js";
export { startViewer, type ViewerOptions, type RunningViewer } from "./viewer-server.js";
export { outcomeTags, perTask, pairedOutcomes, type OutcomeTag } from "./breakdowns.js";
export { compareRuns, comparisonCells, type ComparedRun, type RunComparison } from "./compare-runs.js";
export { controlTables, reflectionControls, type ControlComparison } from "./reflection-controls.js";
export { armReport, recordArmReport, type ArmReport } from "./arms.js";
export { recordTimeAxis, timeAxis, timeBucketSizes, type TimeAxis, type TimeBucketSize } from "./time-axis.js";
