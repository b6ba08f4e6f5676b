import type { Readable } from "node:stream";

/** Keeps the first `limit` bytes of a stream and counts the rest, reading to the end so the writer never blocks. */
export class CappedOutput {
  private readonly chunks: Buffer[] = [];
  private kept = 0;
  bytes = 0;

  constructor(
    stream: Readable | null,
    private readonly limit: number,
  ) {
    stream?.on("data", (chunk: Buffer) => this.add(chunk));
    // A sandbox killed mid-write can leave a reset socket; what was read stays.
    stream?.on("error", () => undefined);
  }

  private add(chunk: Buffer): void {
    this.bytes += chunk.length;
    const room = this.limit - this.kept;
    if (room <= 0) return;
    const part = chunk.length <= room ? chunk : chunk.subarray(0, room);
    this.chunks.push(part);
    this.kept += part.length;
  }

  get truncated(): boolean {
    return this.bytes > this.kept;
  }

  /** The kept bytes as UTF-8 (a character cut at the limit becomes U+FFFD). */
  text(): string {
    return Buffer.concat(this.chunks).toString("utf8");
  }
}
