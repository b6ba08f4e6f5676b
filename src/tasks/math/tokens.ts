/**
 * LaTeX answer text as tokens. Spaces are dropped but remembered on the token after them (`space`), since a space
 * separates a unit word from its number (`5 cm`) and a command from a letter (`\pi r`). `\text{…}`-like groups stay
 * one token carrying their raw content; `\begin{pmatrix}` / `\end{pmatrix}` become one token each. A few Unicode
 * symbols map to their LaTeX commands (− × · ÷ π √ ∞ ± ≤ ≥ ≠ ∪ ∈). One pass; a `\text{` never closed takes the rest.
 */
export type TokenKind = "num" | "letter" | "cmd" | "sym" | "text" | "begin" | "end";

export interface Token {
  kind: TokenKind;
  /** num: the digits as written (`12`, `1.5`, `.5`); letter: one letter; cmd: `\frac`, `\{`; sym: one character;
   * text: the content of the group; begin/end: the environment name. */
  text: string;
  space: boolean;
}

/** Commands whose brace group is text, not math. */
const TEXT_COMMANDS = new Set(["\\text", "\\textbf", "\\textit", "\\textrm", "\\textnormal", "\\textsf", "\\texttt", "\\textup", "\\mbox", "\\mathrm", "\\hbox"]);
/** Commands that only change how math looks. */
const DROPPED_COMMANDS = new Set(["\\mathbf", "\\mathit", "\\mathsf", "\\boldsymbol", "\\bm", "\\displaystyle", "\\textstyle", "\\scriptstyle", "\\limits", "\\nolimits"]);

const UNICODE: Record<string, Token> = {
  "−": { kind: "sym", text: "-", space: false },
  "–": { kind: "sym", text: "-", space: false },
  "×": { kind: "cmd", text: "\\times", space: false },
  "·": { kind: "cmd", text: "\\cdot", space: false },
  "÷": { kind: "cmd", text: "\\div", space: false },
  π: { kind: "cmd", text: "\\pi", space: false },
  "√": { kind: "cmd", text: "\\sqrt", space: false },
  "∞": { kind: "cmd", text: "\\infty", space: false },
  "±": { kind: "cmd", text: "\\pm", space: false },
  "≤": { kind: "cmd", text: "\\le", space: false },
  "≥": { kind: "cmd", text: "\\ge", space: false },
  "≠": { kind: "cmd", text: "\\ne", space: false },
  "∪": { kind: "cmd", text: "\\cup", space: false },
  "∈": { kind: "cmd", text: "\\in", space: false },
};

export function tokenize(input: string): Token[] {
  const tokens: Token[] = [];
  let space = false;
  let i = 0;
  const push = (kind: TokenKind, text: string) => {
    tokens.push({ kind, text, space });
    space = false;
  };
  while (i < input.length) {
    const char = input[i] as string;
    const code = input.charCodeAt(i);
    if (char === " " || char === "\t" || char === "\n" || char === "\r" || char === "\u00a0") {
      space = true;
      i++;
    } else if (isDigit(code) || (char === "." && isDigit(input.charCodeAt(i + 1)))) {
      let j = i;
      while (isDigit(input.charCodeAt(j))) j++;
      if (input[j] === "." && isDigit(input.charCodeAt(j + 1))) {
        j++;
        while (isDigit(input.charCodeAt(j))) j++;
      }
      push("num", input.slice(i, j));
      i = j;
    } else if (isLetter(code)) {
      push("letter", char);
      i++;
    } else if (char === "\\") {
      let j = i + 1;
      while (isLetter(input.charCodeAt(j))) j++;
      if (j === i + 1) j = Math.min(i + 2, input.length);
      const name = input.slice(i, j);
      i = j;
      if (TEXT_COMMANDS.has(name) || name === "\\begin" || name === "\\end") {
        let k = i;
        while (input[k] === " ") k++;
        if (input[k] !== "{") {
          if (name === "\\begin" || name === "\\end") push("cmd", name);
          continue;
        }
        const close = matchingBrace(input, k);
        const content = input.slice(k + 1, close);
        i = Math.min(close + 1, input.length);
        if (name === "\\begin") push("begin", content.trim());
        else if (name === "\\end") push("end", content.trim());
        else push("text", content);
      } else if (DROPPED_COMMANDS.has(name)) {
        continue;
      } else push("cmd", name);
    } else if (UNICODE[char] !== undefined) {
      push(UNICODE[char].kind, UNICODE[char].text);
      i++;
    } else {
      // Anything else is its own symbol, a lone surrogate or NUL included; a surrogate pair stays together.
      const width = code >= 0xd800 && code <= 0xdbff && input.charCodeAt(i + 1) >= 0xdc00 && input.charCodeAt(i + 1) <= 0xdfff ? 2 : 1;
      push("sym", input.slice(i, i + width));
      i += width;
    }
  }
  return tokens;
}

/** The index of the brace closing the one at `open` (escaped braces skipped), or the text's length. */
function matchingBrace(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    const char = text[i];
    if (char === "\\") i++;
    else if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return i;
  }
  return text.length;
}

export function isDigit(code: number): boolean {
  return code >= 48 && code <= 57;
}

export function isLetter(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122);
}

/**
 * Tokens back to text, canonically: every argument of `^`, `_`, `\frac`, `\sqrt`, `\binom` braced (`\frac12` →
 * `\frac{1}{2}`, `x^2` → `x^{2}`), no spaces except between a command and a following letter or digit. Used as the
 * comparison key for expressions the algebra does not read.
 */
export function printTokens(input: readonly Token[]): string {
  const tokens = input.slice();
  let out = "";
  let i = 0;
  let last: Token | undefined;
  /** The argument at `i`, braced, advancing past it. */
  const argument = (): string => {
    const token = tokens[i];
    if (token === undefined) return "{}";
    if (isSym(token, "{")) {
      const end = closingIndex(tokens, i);
      const text = `{${printTokens(tokens.slice(i + 1, end))}}`;
      i = end + 1;
      return text;
    }
    if (token.kind === "num" && token.text.length > 1 && !token.text.includes(".")) {
      // `x^23` is x^{2}3 in LaTeX: an argument without braces is one character.
      tokens[i] = { ...token, text: token.text.slice(1), space: false };
      return `{${token.text[0]}}`;
    }
    i++;
    return `{${tokenText(token)}}`;
  };
  while (i < tokens.length) {
    const token = tokens[i] as Token;
    i++;
    if (token.kind === "cmd" && (token.text === "\\frac" || token.text === "\\binom")) out += token.text + argument() + argument();
    else if (token.kind === "cmd" && token.text === "\\sqrt") out += "\\sqrt" + argument();
    else if (isSym(token, "^") || isSym(token, "_")) out += token.text + argument();
    else {
      if (last !== undefined && last.kind === "cmd" && /^\\[A-Za-z]+$/u.test(last.text) && (token.kind === "letter" || token.kind === "num")) out += " ";
      out += tokenText(token);
    }
    last = token;
  }
  return out;
}

export function isSym(token: Token | undefined, text: string): boolean {
  return token !== undefined && token.kind === "sym" && token.text === text;
}

/** The index of the `}` closing the `{` at `open`, or the length when it is never closed. */
export function closingIndex(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    const token = tokens[i] as Token;
    if (token.kind !== "sym") continue;
    if (token.text === "{") depth++;
    else if (token.text === "}" && --depth === 0) return i;
  }
  return tokens.length;
}

function tokenText(token: Token): string {
  switch (token.kind) {
    case "text":
      return `\\text{${token.text.trim().replace(/\s+/g, " ")}}`;
    case "begin":
      return `\\begin{${token.text}}`;
    case "end":
      return `\\end{${token.text}}`;
    default:
      return token.text;
  }
}
