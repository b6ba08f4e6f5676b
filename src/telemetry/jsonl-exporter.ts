import { closeSync, fdatasyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type * as OtelApi from "@opentelemetry/api";
import type * as OtelCore from "@opentelemetry/core";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { requireOptional } from "../util/optional-package.js";

/** One finished span, as one line of a trace file. */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  /** Null for a root span. */
  parentSpanId: string | null;
  name: string;
  startTime: string;
  endTime: string;
  durationMs: number;
  attributes: Record<string, unknown>;
  status: { code: "UNSET" | "OK" | "ERROR"; message?: string };
  events?: Array<{ name: string; time: string; attributes: Record<string, unknown> }>;
}

/** The OpenTelemetry packages a trace file is written with, loaded when the first span is written or the first file opened. */
const FEATURE = "a trace file (OpenTelemetry spans)";
const otelApi = () => requireOptional<typeof OtelApi>("@opentelemetry/api", FEATURE);
const otelCore = () => requireOptional<typeof OtelCore>("@opentelemetry/core", FEATURE);

function statusName(code: OtelApi.SpanStatusCode): SpanRecord["status"]["code"] {
  const { SpanStatusCode } = otelApi();
  return code === SpanStatusCode.ERROR ? "ERROR" : code === SpanStatusCode.OK ? "OK" : "UNSET";
}

const isoTime = (time: OtelApi.HrTime): string => new Date(otelCore().hrTimeToMilliseconds(time)).toISOString();

export function toSpanRecord(span: ReadableSpan): SpanRecord {
  const { hrTimeToMilliseconds } = otelCore();
  const context = span.spanContext();
  const record: SpanRecord = {
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    name: span.name,
    startTime: isoTime(span.startTime),
    endTime: isoTime(span.endTime),
    durationMs: hrTimeToMilliseconds(span.duration),
    attributes: { ...span.attributes },
    status: { code: statusName(span.status.code), ...(span.status.message === undefined ? {} : { message: span.status.message }) },
  };
  if (span.events.length > 0) record.events = span.events.map((event) => ({ name: event.name, time: isoTime(event.time), attributes: { ...event.attributes } }));
  return record;
}

/**
 * Writes finished spans to a JSON-lines file, one span a line. The file is opened for appending (a resumed
 * run adds to the trace of the run it resumes) and each export is written and `fdatasync`ed before it
 * reports success, so a crash loses no span that had ended. Meant for a `SimpleSpanProcessor`: the write is
 * synchronous, so a span's line is on disk when `end()` returns.
 */
export class JsonlSpanExporter implements SpanExporter {
  readonly path: string;
  private fd: number | undefined;

  /** Opens (creating folders as needed) `path` now, so a bad path fails at setup rather than at the first span. */
  constructor(path: string) {
    this.path = path;
    mkdirSync(dirname(path), { recursive: true });
    this.fd = openSync(path, "a");
  }

  export(spans: ReadableSpan[], resultCallback: (result: OtelCore.ExportResult) => void): void {
    const { ExportResultCode } = otelCore();
    if (this.fd === undefined) {
      resultCallback({ code: ExportResultCode.FAILED, error: new Error(`trace file ${this.path} is closed: the tracer was shut down`) });
      return;
    }
    try {
      const bytes = Buffer.from(spans.map((span) => `${JSON.stringify(toSpanRecord(span))}\n`).join(""));
      for (let offset = 0; offset < bytes.length; ) offset += writeSync(this.fd, bytes, offset);
      fdatasyncSync(this.fd);
      resultCallback({ code: ExportResultCode.SUCCESS });
    } catch (error) {
      resultCallback({ code: ExportResultCode.FAILED, error: error instanceof Error ? error : new Error(String(error)) });
    }
  }

  async forceFlush(): Promise<void> {
    if (this.fd !== undefined) fdatasyncSync(this.fd);
  }

  async shutdown(): Promise<void> {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    closeSync(fd);
  }
}
