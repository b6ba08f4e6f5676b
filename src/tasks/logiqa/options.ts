/**
 * LogiQA's option lines, normalised: the four option texts in letter order, labels removed.
 *
 * The machine translation left the labels in several shapes (see logiqa/MANIFEST.md): `A.text`, `A text`,
 * `A? text`, `d.text`; the label displaced into the sentence (`Country A.H will…`, `Mr.A.P wrote…`,
 * `Storehouse B.3`, `A small amount of cultivated land in C.A area…`); and in 19 Test records the lines come
 * in the order A, C, B, D. The gold letter follows the printed labels, not the line order (Test record 115:
 * "some people in Harbin are not workers", gold b, is the third line, labelled B), so options are put back in
 * label order. Where the labels read do not make A–D once each, the lines are taken in file order.
 */
export function normaliseOptions(lines: readonly string[]): string[] {
  const read = lines.map((line, index) => readOption(line, LETTERS[index] as string));
  const labels = read.map((option) => option.label).join("");
  if (lines.length === LETTERS.length && [...labels].sort().join("") === LETTERS) {
    return [...LETTERS].map((letter) => (read.find((option) => option.label === letter) as Option).text);
  }
  return lines.map((line, index) => stripOwnLabel(line, LETTERS[index] ?? "") ?? line.trim());
}

const LETTERS = "ABCD";

interface Option {
  label: string;
  text: string;
}

function readOption(line: string, expected: string): Option {
  const own = stripOwnLabel(line, expected);
  if (own !== null) return { label: expected, text: own };
  const other = /^([A-D])[.．]\s*(\S.*)$/u.exec(line.trim());
  if (other !== null) return { label: other[1] as string, text: (other[2] as string).trim() };
  const displaced = new RegExp(`(^|[\\s.])${expected}[.．](?=\\S)`, "u").exec(line);
  if (displaced !== null) {
    const text = line.slice(0, displaced.index + (displaced[1] as string).length) + line.slice(displaced.index + displaced[0].length);
    return { label: expected, text: text.trim() };
  }
  return { label: expected, text: line.trim() };
}

/** The text after this line's own label (`A.`, `A `, `A?`, `a.` …), or null when it does not open with it. */
function stripOwnLabel(line: string, letter: string): string | null {
  const match = /^\s*([A-Za-z])(?:[.．?？:：、)]\s*|\s+)(\S.*)$/u.exec(line);
  if (match === null || (match[1] as string).toUpperCase() !== letter) return null;
  return (match[2] as string).trim();
}
