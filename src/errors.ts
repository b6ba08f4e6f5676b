const MARKER = Symbol.for("reflectkit.error");

/** Base of every error reflectkit throws on purpose. `isInstance` works across package copies. */
export class ReflectkitError extends Error {
  readonly [MARKER] = true;
  override name = "ReflectkitError";
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
  /**
   * Whether `error` is one of this class: `ReflectkitError.isInstance(e)` any reflectkit error, `InputError.isInstance(e)`
   * an input error. Errors from another copy of the package carry the marker and are matched by their class's place
   * in the prototype chain, so match by class here rather than by comparing `name` strings.
   */
  static isInstance<T extends ReflectkitError>(this: abstract new (...args: never[]) => T, error: unknown): error is T {
    if (typeof error !== "object" || error === null || (error as Record<symbol, unknown>)[MARKER] !== true) return false;
    // Any marked error is a reflectkit error, whichever copy of the package threw it.
    if (error instanceof this || (this as unknown) === ReflectkitError) return true;
    for (let proto: unknown = Object.getPrototypeOf(error); proto !== null && proto !== undefined; proto = Object.getPrototypeOf(proto)) {
      if ((proto as { constructor?: { name?: string } }).constructor?.name === this.name) return true;
    }
    return false;
  }
}

/** Bad input in a file: names the file and the 1-based line. */
export class InputError extends ReflectkitError {
  override name = "InputError";
  constructor(
    message: string,
    readonly path: string,
    readonly line?: number,
    options?: { cause?: unknown },
  ) {
    super(`${path}${line === undefined ? "" : `:${line}`}: ${message}`, options);
  }
}

/** A configuration or usage mistake (bad flag, bad model spec). */
export class UsageError extends ReflectkitError {
  override name = "UsageError";
}

/**
 * A field of a request (the gateway's JSON body, the middleware's call options) is malformed or not allowed. `field` is
 * its path as the caller wrote it, e.g. `reflect.max_turns` or `messages[2].content`; the gateway answers 400 with it
 * as OpenAI's `param`.
 */
export class RequestFieldError extends ReflectkitError {
  override name = "RequestFieldError";
  constructor(
    readonly field: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(`${field}: ${detail}`, options);
  }
}

/** A model could not be found or fetched; the message says how to get it. */
export class ModelNotFoundError extends ReflectkitError {
  override name = "ModelNotFoundError";
}

/** A model backend failed a request. `isRetryable` follows the HTTP status (408/409/429/5xx) or network failure. */
export class ModelCallError extends ReflectkitError {
  override name = "ModelCallError";
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly isRetryable: boolean,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The user interrupted a run (Ctrl-C); finished work is on disk and the same command resumes it. */
export class InterruptedError extends ReflectkitError {
  override name = "InterruptedError";
}
