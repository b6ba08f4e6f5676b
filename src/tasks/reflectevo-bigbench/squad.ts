/**
 * SQuAD v1.1's answer normalisation and scores, as its official evaluate script defines them: lowercase, drop
 * ASCII punctuation (Python's `string.punctuation`), drop the articles a/an/the as whole words, collapse
 * whitespace; exact match compares the normalised strings, F1 the bags of normalised tokens.
 *
 * One departure, for safety: a reference that normalises to nothing (the answer "a" or "The") would make an empty
 * reply an exact match, so such a reference, and the prediction compared with it, keep their articles and
 * punctuation (lowercased, whitespace collapsed).
 */
const PUNCTUATION = /[!"#$%&'()*+,\-./:;<=>?@[\\\]^_`{|}~]/gu;
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;

export function squadNormalise(text: string): string {
  return collapse(text.toLowerCase().replace(PUNCTUATION, "").replace(ARTICLES, " "));
}

function collapse(text: string): string {
  return text.split(/\s+/u).filter((token) => token !== "").join(" ");
}

function forms(prediction: string, reference: string): [string, string] {
  const normal = squadNormalise(reference);
  if (normal !== "") return [squadNormalise(prediction), normal];
  return [collapse(prediction.toLowerCase()), collapse(reference.toLowerCase())];
}

export function exactMatch(prediction: string, reference: string): boolean {
  const [p, r] = forms(prediction, reference);
  return r !== "" && p === r;
}

/** Token F1 in [0, 1]; 0 when nothing is shared (SQuAD v1.1: also when either side is empty). */
export function tokenF1(prediction: string, reference: string): number {
  const [p, r] = forms(prediction, reference);
  const predicted = p === "" ? [] : p.split(" ");
  const wanted = r === "" ? [] : r.split(" ");
  const counts = new Map<string, number>();
  for (const token of wanted) counts.set(token, (counts.get(token) ?? 0) + 1);
  let same = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      same++;
      counts.set(token, left - 1);
    }
  }
  if (same === 0) return 0;
  const precision = same / predicted.length;
  const recall = same / wanted.length;
  return (2 * precision * recall) / (precision + recall);
}

/** The best exact match and F1 over several acceptable references. */
export function bestScores(prediction: string, references: readonly string[]): { exact: boolean; f1: number } {
  let exact = false;
  let f1 = 0;
  for (const reference of references) {
    exact ||= exactMatch(prediction, reference);
    f1 = Math.max(f1, tokenF1(prediction, reference));
  }
  return { exact, f1 };
}
