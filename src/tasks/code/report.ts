/** An exception Python raised, as the judge reports it. */
export interface PythonError {
  type: string;
  message: string;
  /** Line in the model's code (1-based) where it was raised, null when elsewhere. */
  line: number | null;
  /** That source line. */
  text: string | null;
}

/** One event of the judge's report (judge-source.ts lists them); `seq` counts from 0. */
export type HarnessEvent = { seq: number } & (
  | ({ event: "bad-input"; stage: string } & PythonError)
  | ({ event: "compile-error" | "program-error" } & PythonError)
  | ({ event: "setup-error"; stage: "before" | "after" } & PythonError)
  | { event: "start"; stage: "program" }
  | { event: "start"; stage: "test"; index: number }
  | ({ event: "fail"; index: number; testLine: string | null } & PythonError)
  | { event: "value"; index: number; value: string }
  | { event: "result"; index: number; status: "pass" | "fail" | "unsplit"; reason?: string }
  | { event: "lost" }
  | { event: "done"; passed: number; total: number }
);

const EVENTS = new Set(["bad-input", "compile-error", "program-error", "setup-error", "start", "fail", "value", "result", "lost", "done"]);

/**
 * Reads the judge's report strictly: frames `<length>:<json>\n`, back to back to the last byte, each an object
 * with a known `event` and `seq` equal to its position. Anything else — a partial, extra or malformed frame, a gap
 * in `seq`, a report cut at its cap — is an error, and the run cannot be judged.
 */
export function readReport(text: string, truncated: boolean): { events: HarnessEvent[] } | { error: string } {
  if (truncated) return { error: "the judge's report went past its size cap" };
  const events: HarnessEvent[] = [];
  let at = 0;
  while (at < text.length) {
    const colon = text.indexOf(":", at);
    const size = colon === -1 ? Number.NaN : Number(text.slice(at, colon));
    if (!/^\d{1,7}$/.test(text.slice(at, colon)) || !Number.isSafeInteger(size)) return { error: `a malformed frame in the judge's report at byte ${at}` };
    const end = colon + 1 + size;
    if (end >= text.length || text[end] !== "\n") return { error: `a partial frame in the judge's report at byte ${at}` };
    let event: unknown;
    try {
      event = JSON.parse(text.slice(colon + 1, end));
    } catch {
      return { error: `a frame that is not JSON in the judge's report at byte ${at}` };
    }
    if (typeof event !== "object" || event === null || !EVENTS.has((event as { event: string }).event) || (event as { seq: unknown }).seq !== events.length) {
      return { error: `an unknown or out-of-order event in the judge's report at byte ${at}` };
    }
    events.push(event as HarnessEvent);
    at = end + 1;
  }
  return { events };
}
