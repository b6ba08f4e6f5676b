/**
 * The one durable JSONL log a run writes, its record writer and the secret scrubber every writer uses.
 */
export { openRecordWriter, RecordWriteError, type RecordWriter, type RecordWriterOptions } from "./record-writer.js";
export { appendToLog, findLog, logFormat, openLog, readLog, readLogIn, type LineCheck, type LogLines, type LogWriter, type OpenedLog, type OpenLogOptions, type ReadLogOptions } from "./log.js";
export { secretScrubber } from "./secrets.js";
