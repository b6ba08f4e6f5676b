/**
 * The content of the last `\boxed{…}` (or `\fbox{…}`) of a text, braces balanced, in one linear pass: a hostile
 * output with 100,000 opening braces costs one scan, not one scan per brace. Escaped braces `\{` `\}` do not count.
 * "Last" means the one that starts last; if that one is never closed the model was cut off mid-answer and there
 * is no answer, even when an earlier box was complete. `\boxed 5` (no braces) takes the next word.
 */
export type Boxed = { found: true; content: string; start: number } | { found: false; reason: "none" | "unclosed" };

const MARKERS = ["\\boxed", "\\fbox"];

export function lastBoxed(text: string): Boxed {
  // Stack of open braces: -1 for an ordinary brace, else the index where a box's content starts.
  const stack: number[] = [];
  let best: { start: number; end: number } | null = null;
  let lastOpened = -1;
  let i = 0;
  while (i < text.length) {
    const char = text[i];
    if (char === "\\") {
      const marker = MARKERS.find((m) => text.startsWith(m, i) && !isLetter(text.charCodeAt(i + m.length)));
      if (marker === undefined) {
        i += 2;
        continue;
      }
      let j = i + marker.length;
      while (j < text.length && (text[j] === " " || text[j] === "\t")) j++;
      if (text[j] === "{") {
        stack.push(j + 1);
        lastOpened = j + 1;
        i = j + 1;
      } else {
        let end = j;
        while (end < text.length && !/[\s$]/u.test(text[end] as string)) end++;
        if (end > j && j > i + marker.length && (best === null || j > best.start)) best = { start: j, end };
        i = Math.max(end, i + marker.length);
      }
      continue;
    }
    if (char === "{") stack.push(-1);
    else if (char === "}" && stack.length > 0) {
      const start = stack.pop() as number;
      if (start !== -1 && (best === null || start > best.start)) best = { start, end: i };
    }
    i++;
  }
  if (lastOpened !== -1 && (best === null || lastOpened > best.start) && stack.includes(lastOpened)) return { found: false, reason: "unclosed" };
  if (best === null) return { found: false, reason: "none" };
  return { found: true, content: text.slice(best.start, best.end), start: best.start };
}

function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}
