export * from "./tracer.js";
export { createOtelTracer, otlpEndpointFromEnv, TelemetryExportError, type OtelTracerOptions, type ExportFailure, type IdGenerator } from "./otel.js";
export { JsonlSpanExporter, toSpanRecord, type SpanRecord } from "./jsonl-exporter.js";
export { sanitizeAttributes, redactSecrets, isSecretKey, secretKeyPattern, contentKeys } from "./sanitize.js";
