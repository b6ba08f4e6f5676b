/**
 * The OpenTelemetry integration: a `Tracer` (tracer.ts) backed by the OpenTelemetry trace SDK, writing
 * finished spans to a JSON-lines file, to an OTLP/HTTP collector, or both.
 *
 * Nothing is registered globally: the provider is private to the tracer, and parent/child nesting goes
 * through the explicit `parent` handle (`trace.setSpan(ROOT_CONTEXT, parent)`), never through an ambient
 * context manager, so two tracers in one process (or a host application's own OpenTelemetry setup) do not
 * see each other's spans.
 */
import type * as OtelApi from "@opentelemetry/api";
import type * as OtelCore from "@opentelemetry/core";
import type * as OtlpHttp from "@opentelemetry/exporter-trace-otlp-http";
import type * as OtelResources from "@opentelemetry/resources";
import type * as OtelSdk from "@opentelemetry/sdk-trace-base";
import type { IdGenerator, SpanExporter, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type * as Semconv from "@opentelemetry/semantic-conventions";
import { ReflectkitError, UsageError } from "../errors.js";
import { JsonlSpanExporter } from "./jsonl-exporter.js";
import { redactSecrets, sanitizeAttributes } from "./sanitize.js";
import { requireOptional } from "../util/optional-package.js";
import type { Attributes, SpanHandle, Tracer } from "./tracer.js";

export type { IdGenerator } from "@opentelemetry/sdk-trace-base";

export interface OtelTracerOptions {
  /** Append every finished span to this JSON-lines file (created with its folders; a resumed run appends). */
  jsonlPath?: string;
  /**
   * Export spans in batches to this OTLP/HTTP (JSON) traces URL, e.g. `http://localhost:4318/v1/traces`.
   * A bare origin (`http://localhost:4318`) gets the standard `/v1/traces` path. See `otlpEndpointFromEnv`.
   */
  otlpEndpoint?: string;
  /** Extra request headers for the OTLP exporter (e.g. a collector's API key); merged with `OTEL_EXPORTER_OTLP_HEADERS`. */
  otlpHeaders?: Record<string, string>;
  /** The `service.name` resource attribute. Default `reflectkit`. */
  serviceName?: string;
  /** Record prompts and completions (`gen_ai.input.messages`, `gen_ai.output.messages`). Default false. */
  recordContent?: boolean;
  /** Trace and span ids (32 and 16 lowercase hex characters). Default: random. Inject for deterministic tests. */
  idGenerator?: IdGenerator;
  /**
   * Wall clock in epoch milliseconds, read at span start, span end and for exception events. Default: the
   * SDK's own high-resolution clock. The SDK has no clock option, so the tracer passes every timestamp to it
   * explicitly (as a `Date`, since the SDK would take a small number for a `performance.now()` reading).
   */
  now?: () => number;
}

/** Spans that a sink refused; collected during the run and reported by `shutdown()`. */
export interface ExportFailure {
  sink: string;
  spans: number;
  error: Error;
}

/** Some spans could not be written or sent. The run's own results are unaffected. */
export class TelemetryExportError extends ReflectkitError {
  override name = "TelemetryExportError";
  constructor(
    readonly failures: readonly ExportFailure[],
    options?: { cause?: unknown },
  ) {
    const lost = failures.reduce((sum, failure) => sum + failure.spans, 0);
    const sinks = [...new Set(failures.map((failure) => failure.sink))].join(", ");
    const first = failures[0]?.error.message ?? (options?.cause instanceof Error ? options.cause.message : String(options?.cause));
    super(`${lost} span(s) were not exported to ${sinks || "the trace exporters"} (first error: ${first}) — check that the collector is reachable and the trace file writable, or drop otlpEndpoint / jsonlPath`, options);
  }
}

/**
 * The OTLP traces URL the standard environment variables ask for, or undefined when neither is set.
 * `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` is used as is; `OTEL_EXPORTER_OTLP_ENDPOINT` is a base URL to which
 * `v1/traces` is appended, as the OpenTelemetry exporter specification says.
 */
export function otlpEndpointFromEnv(env: Readonly<Record<string, string | undefined>> = process.env): string | undefined {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return `${base.replace(/\/+$/, "")}/v1/traces`;
  return undefined;
}

/** `endpoint` as a traces URL: a bare origin gets `/v1/traces`; a URL with a path is kept. */
function tracesUrl(endpoint: string): string {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch (error) {
    throw new UsageError(`otlpEndpoint ${JSON.stringify(endpoint)} is not a URL — pass e.g. http://localhost:4318/v1/traces`, { cause: error });
  }
  return url.pathname === "/" && !url.search ? `${url.origin}/v1/traces` : endpoint;
}

/** `createOtelTracer`, needing the OpenTelemetry SDK: the packages it loads on its first call. */
const FEATURE = "createOtelTracer (OpenTelemetry tracing)";

/** The OTLP/HTTP exporter, loaded only for a tracer that sends spans to a collector. */
const otlpHttp = () => requireOptional<typeof OtlpHttp>("@opentelemetry/exporter-trace-otlp-http", FEATURE);

/**
 * The OpenTelemetry SDK packages a tracer is built from, loaded on the first `createOtelTracer` call rather than when
 * this module is imported: importing reflectkit loads no OpenTelemetry code until a run asks for traces.
 */
function otelSdk() {
  return {
    api: requireOptional<typeof OtelApi>("@opentelemetry/api", FEATURE),
    core: requireOptional<typeof OtelCore>("@opentelemetry/core", FEATURE),
    resources: requireOptional<typeof OtelResources>("@opentelemetry/resources", FEATURE),
    sdk: requireOptional<typeof OtelSdk>("@opentelemetry/sdk-trace-base", FEATURE),
    semconv: requireOptional<typeof Semconv>("@opentelemetry/semantic-conventions", FEATURE),
  };
}

/** `exporter`, with every refused export added to `failures`. */
function recordingFailures(exporter: SpanExporter, sink: string, failures: ExportFailure[], { ExportResultCode }: typeof OtelCore): SpanExporter {
  return {
    export(spans, resultCallback) {
      exporter.export(spans, (result) => {
        if (result.code !== ExportResultCode.SUCCESS) failures.push({ sink, spans: spans.length, error: result.error ?? new Error("export failed") });
        resultCallback(result);
      });
    },
    forceFlush: async () => exporter.forceFlush?.(),
    shutdown: () => exporter.shutdown(),
  };
}

function describeError(error: unknown): { type: string; message: string; stack: string | undefined } {
  if (error instanceof Error) return { type: error.name, message: error.message, stack: error.stack };
  return { type: typeof error, message: String(error), stack: undefined };
}

/**
 * A `Tracer` built on the OpenTelemetry SDK: spans go to `jsonlPath` (immediately, one line each) and/or to
 * `otlpEndpoint` (batched). Attributes pass through `sanitizeAttributes` on the way in, so credentials never
 * reach a span and content is kept only with `recordContent`. Call `shutdown()` at the end of the run: it
 * flushes the batches, closes the file, and throws `TelemetryExportError` if any span was lost.
 */
export function createOtelTracer(options: OtelTracerOptions): Tracer {
  const { jsonlPath, otlpEndpoint, now } = options;
  const recordContent = options.recordContent ?? false;
  if (jsonlPath === undefined && otlpEndpoint === undefined) {
    throw new UsageError("createOtelTracer needs jsonlPath or otlpEndpoint (or both) — use noopTracer to trace nothing");
  }
  const { api, core, resources, sdk, semconv } = otelSdk();
  const { ROOT_CONTEXT, SpanStatusCode, trace } = api;
  const { AlwaysOnSampler, BasicTracerProvider, BatchSpanProcessor, SimpleSpanProcessor } = sdk;
  const { ATTR_EXCEPTION_MESSAGE, ATTR_EXCEPTION_STACKTRACE, ATTR_EXCEPTION_TYPE, ATTR_SERVICE_NAME } = semconv;

  const failures: ExportFailure[] = [];
  const spanProcessors: SpanProcessor[] = [];
  if (jsonlPath !== undefined) {
    spanProcessors.push(new SimpleSpanProcessor(recordingFailures(new JsonlSpanExporter(jsonlPath), `trace file ${jsonlPath}`, failures, core)));
  }
  if (otlpEndpoint !== undefined) {
    const url = tracesUrl(otlpEndpoint);
    const exporter = new (otlpHttp().OTLPTraceExporter)({ url, ...(options.otlpHeaders === undefined ? {} : { headers: { ...options.otlpHeaders } }) });
    spanProcessors.push(new BatchSpanProcessor(recordingFailures(exporter, `OTLP ${url}`, failures, core)));
  }
  const provider = new BasicTracerProvider({
    resource: resources.defaultResource().merge(resources.resourceFromAttributes({ [ATTR_SERVICE_NAME]: options.serviceName ?? "reflectkit" })),
    // Every span, whatever OTEL_TRACES_SAMPLER says: the trace file is part of a run's record, not a sample of it.
    sampler: new AlwaysOnSampler(),
    spanProcessors,
    ...(options.idGenerator === undefined ? {} : { idGenerator: options.idGenerator }),
  });
  const otelTracer = provider.getTracer("reflectkit");

  const time = (): Date | undefined => (now === undefined ? undefined : new Date(now()));
  const clean = (attributes: Attributes) => sanitizeAttributes(attributes, { recordContent });
  const spans = new WeakMap<SpanHandle, OtelApi.Span>();

  function startSpan(name: string, attributes: Attributes = {}, parent?: SpanHandle): SpanHandle {
    let context = ROOT_CONTEXT;
    if (parent !== undefined) {
      const parentSpan = spans.get(parent);
      if (parentSpan === undefined) throw new UsageError(`span "${name}": its parent was not started by this tracer — start child spans on the tracer that started their parent`);
      context = trace.setSpan(ROOT_CONTEXT, parentSpan);
    }
    const span = otelTracer.startSpan(name, { attributes: clean(attributes), startTime: time() }, context);
    let ended = false;
    const handle: SpanHandle = {
      setAttributes(more) {
        if (!ended) span.setAttributes(clean(more));
      },
      end(error) {
        if (ended) return;
        ended = true;
        const at = time();
        if (error !== undefined) {
          // The semconv `exception` event, built here rather than by `recordException` so that the message
          // and stack go through the same redaction as every other attribute.
          const { type, message, stack } = describeError(error);
          span.addEvent("exception", clean({ [ATTR_EXCEPTION_TYPE]: type, [ATTR_EXCEPTION_MESSAGE]: message, [ATTR_EXCEPTION_STACKTRACE]: stack }), at);
          span.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(`${type}: ${message}`) });
        }
        span.end(at);
      },
    };
    spans.set(handle, span);
    return handle;
  }

  let shuttingDown: Promise<void> | undefined;
  async function shutdown(): Promise<void> {
    let flushError: unknown;
    try {
      await provider.forceFlush();
    } catch (error) {
      flushError = error;
    }
    try {
      await provider.shutdown();
    } catch (error) {
      flushError ??= error;
    }
    // A refused export is in `failures` and also rejects the flush; report it once, with the flush error as cause.
    if (failures.length > 0 || flushError !== undefined) throw new TelemetryExportError(failures, { cause: flushError });
  }

  return {
    startSpan,
    recordContent,
    shutdown: () => (shuttingDown ??= shutdown()),
  };
}
