/** The lettered options a question lists: letters in order ("ABCDE") and their texts. */
export interface OptionList {
  letters: string;
  texts: string[];
}

const LABELLED = /^\s*(?:\(([A-Z])\)|([A-Z])[.)])\s*(.*)$/u;

/**
 * Reads the options a question lists one per line, as BIG-Bench Hard writes them ("(A) 12/11/1937") and as
 * ReflectEvo's BIG-bench items do ("A. True"): the last run of labelled lines whose letters go A, B, C… in order.
 * Lines after the last "Options:" line are preferred when there is one. Null when the text lists no options.
 */
export function parseOptionList(question: string): OptionList | null {
  const lines = question.split("\n");
  let from = 0;
  lines.forEach((line, index) => {
    if (/^\s*options\s*:\s*$/iu.test(line)) from = index + 1;
  });
  let best: OptionList | null = null;
  let run: OptionList | null = null;
  for (const line of lines.slice(from)) {
    const match = LABELLED.exec(line);
    const letter = match === null ? undefined : (match[1] ?? match[2]);
    if (match !== null && letter !== undefined && (letter === "A" || letter.charCodeAt(0) === 65 + (run?.letters.length ?? 0))) {
      if (letter === "A") run = { letters: "", texts: [] };
      run = run ?? { letters: "", texts: [] };
      run.letters += letter;
      run.texts.push((match[3] ?? "").trim());
      if (run.letters.length >= 2) best = run;
    } else if (line.trim() !== "") {
      run = null;
    }
  }
  return best;
}
