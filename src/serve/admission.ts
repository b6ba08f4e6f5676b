/**
 * Admission of model work: at most `running` requests run at once and at most `queued` more wait; a request beyond
 * that is refused at once (the server's 429), so a burst never piles up unbounded.
 */
export class Admission {
  private active = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    readonly running: number,
    readonly queued: number,
  ) {}

  /** Requests waiting for a slot. */
  get queuedCount(): number {
    return this.waiting.length;
  }

  /** Requests running or waiting. */
  get load(): number {
    return this.active + this.waiting.length;
  }

  /**
   * A slot, or null when running and queue are full. The slot's `ready` resolves when it may run (rejects when
   * `signal` aborts first); `release` frees it, exactly once, whether it ran or not.
   */
  enter(signal: AbortSignal): { ready: Promise<void>; release: () => void } | null {
    if (this.load >= this.running + this.queued) return null;
    let released = false;
    let started = false;
    let wake: (() => void) | undefined;
    const release = (): void => {
      if (released) return;
      released = true;
      if (started) {
        this.active -= 1;
        this.next();
      } else if (wake !== undefined) {
        const at = this.waiting.indexOf(wake);
        if (at >= 0) this.waiting.splice(at, 1);
      }
    };
    if (this.active < this.running) {
      this.active += 1;
      started = true;
      return { ready: Promise.resolve(), release };
    }
    const ready = new Promise<void>((resolve, reject) => {
      wake = () => {
        started = true;
        this.active += 1;
        signal.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = (): void => {
        release();
        reject(signal.reason);
      };
      if (signal.aborted) {
        reject(signal.reason);
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(wake);
    });
    return { ready, release };
  }

  private next(): void {
    if (this.active >= this.running) return;
    this.waiting.shift()?.();
  }
}
