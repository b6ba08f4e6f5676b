/**
 * Lifecycle events of a reflection loop, as spans (core; no dependency). Spans nest
 * `episode → attempt N → generate | verify | critique | reflect | refine`. The OpenTelemetry integration
 * (`createOtelTracer`, otel.ts) implements this interface; the default is `noopTracer`.
 *
 * Attribute names follow the OpenTelemetry GenAI semantic conventions (`gen_ai.*`) plus reflectkit's own
 * (`reflect.*`). Inputs and outputs are recorded only when the caller asks (`recordContent`); secrets never.
 */
export type AttributeValue = string | number | boolean | readonly string[] | readonly number[];
export type Attributes = Record<string, AttributeValue | undefined>;

export interface SpanHandle {
  setAttributes(attributes: Attributes): void;
  /** Ends the span; `error` marks it failed with the error's name and message. Idempotent. */
  end(error?: unknown): void;
}

export interface Tracer {
  /** Starts a span, a child of `parent` when given (else a root span). */
  startSpan(name: string, attributes?: Attributes, parent?: SpanHandle): SpanHandle;
  /** Whether prompts and completions may be recorded on spans (`gen_ai.input.messages`, `gen_ai.output.messages`). */
  readonly recordContent: boolean;
  /** Flushes exporters and releases files and sockets. Idempotent. */
  shutdown(): Promise<void>;
}

const noopSpan: SpanHandle = { setAttributes: () => {}, end: () => {} };

export const noopTracer: Tracer = {
  startSpan: () => noopSpan,
  recordContent: false,
  shutdown: async () => {},
};

/** Runs `body` inside a span that ends when it settles (failed spans carry the error). */
export async function inSpan<T>(tracer: Tracer, name: string, attributes: Attributes, parent: SpanHandle | undefined, body: (span: SpanHandle) => Promise<T>): Promise<T> {
  const span = tracer.startSpan(name, attributes, parent);
  try {
    const result = await body(span);
    span.end();
    return result;
  } catch (error) {
    span.end(error);
    throw error;
  }
}
