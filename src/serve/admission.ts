/** What one client may hold of the admission at once: requests running, and requests waiting. */
export interface ClientShare {
  running: number;
  queued: number;
}

interface Waiter {
  client: string;
  wake: () => void;
}

/**
 * Admission of model work: at most `running` requests run at once and at most `queued` more wait; a request beyond
 * that is refused at once (the server's 429), so a burst never piles up unbounded. Each client (a key, or an address)
 * may have at most `share.running` running and `share.queued` waiting: a free slot goes to the oldest waiter whose
 * client is under its share, so one client's burst cannot hold every slot while another waits.
 */
export class Admission {
  private active = 0;
  private readonly waiting: Waiter[] = [];
  private readonly runningBy = new Map<string, number>();
  private readonly waitingBy = new Map<string, number>();

  constructor(
    readonly running: number,
    readonly queued: number,
    readonly share: ClientShare = { running, queued },
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
   * A slot, null when running and queue are full, or `"client-full"` when `client` holds its whole share. The slot's
   * `ready` resolves when it may run (rejects when `signal` aborts first); `release` frees it, exactly once, whether it
   * ran or not.
   */
  enter(signal: AbortSignal, client = ""): { ready: Promise<void>; release: () => void } | null | "client-full" {
    if (this.load >= this.running + this.queued) return null;
    const runningNow = this.runningBy.get(client) ?? 0;
    const waitingNow = this.waitingBy.get(client) ?? 0;
    const canRun = this.active < this.running && runningNow < this.share.running;
    if (!canRun && waitingNow >= this.share.queued) return "client-full";
    let released = false;
    let started = false;
    let waiter: Waiter | undefined;
    const release = (): void => {
      if (released) return;
      released = true;
      if (started) {
        this.active -= 1;
        bump(this.runningBy, client, -1);
        this.next();
      } else if (waiter !== undefined) {
        const at = this.waiting.indexOf(waiter);
        if (at >= 0) {
          this.waiting.splice(at, 1);
          bump(this.waitingBy, client, -1);
        }
      }
    };
    const start = (): void => {
      started = true;
      this.active += 1;
      bump(this.runningBy, client, 1);
    };
    if (canRun) {
      start();
      return { ready: Promise.resolve(), release };
    }
    const ready = new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        release();
        reject(signal.reason);
      };
      waiter = {
        client,
        wake: () => {
          bump(this.waitingBy, client, -1);
          start();
          signal.removeEventListener("abort", onAbort);
          resolve();
        },
      };
      if (signal.aborted) {
        released = true;
        reject(signal.reason);
        return;
      }
      signal.addEventListener("abort", onAbort, { once: true });
      this.waiting.push(waiter);
      bump(this.waitingBy, client, 1);
    });
    return { ready, release };
  }

  /** Wakes the oldest waiters whose clients are under their share, while slots are free. */
  private next(): void {
    while (this.active < this.running) {
      const at = this.waiting.findIndex((w) => (this.runningBy.get(w.client) ?? 0) < this.share.running);
      if (at < 0) return;
      const [waiter] = this.waiting.splice(at, 1);
      waiter?.wake();
    }
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
}
