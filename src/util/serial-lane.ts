/**
 * Runs synchronous jobs one at a time with a turn of the event loop between any two, so that jobs that each take tens
 * of milliseconds (parsing and checking a request body of megabytes) never run back to back: whatever else is ready —
 * a health probe, a small request — is served between them. A job queued from inside a `setImmediate` callback runs in
 * the next loop iteration, after the poll phase; the lane chains its jobs that way.
 */
export class SerialLane {
  #tail: Promise<void> = Promise.resolve();

  /** Runs `job` once the jobs queued before it are done, in a `setImmediate` callback of its own. */
  run<T>(job: () => T): Promise<T> {
    const result = this.#tail.then(
      () =>
        new Promise<T>((resolve, reject) =>
          setImmediate(() => {
            try {
              resolve(job());
            } catch (error) {
              reject(error);
            }
          }),
        ),
    );
    this.#tail = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }
}
