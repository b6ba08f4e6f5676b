/**
 * A lesson's text as data: text a model wrote (possibly steered by a hostile client) that a later prompt shows as one
 * numbered line inside a `<notes>` block. `lessonText` is the one normalisation it goes through, on the way in (before
 * a store keeps it) and on the way out (every notes block quotes through it, so a lesson stored before this existed is
 * held by the same frame). It is idempotent: a lesson normalised twice reads the same as once, so the stores' duplicate
 * digests and the prompt agree.
 */
import { capLesson, maxLessonChars } from "./lesson-store.js";

/**
 * Look-alikes of the characters a notes tag or a template token is made of (`< > / | [ ]` and the letters of `notes`)
 * that NFKC leaves as they are (Cyrillic, Greek, Armenian, Lisu and Cherokee letters, small capitals, angle brackets
 * of other scripts), mapped to the ASCII character a reader takes them for. The full-width and mathematical forms are
 * NFKC's to fold; a few are listed anyway so the fold holds on text that was not normalised. Every key and value is
 * one UTF-16 unit, so the fold keeps every index where it was.
 */
const CONFUSABLES: Readonly<Record<string, string>> = Object.freeze({
  "<": "‹\u2329〈⟨˂ᐸ❮❬⧼≮＜﹤",
  ">": "›\u232a〉⟩˃ᐳ❯❭⧽≯＞﹥",
  "/": "∕⁄⧸╱⟋〳／",
  "|": "∣ǀ⏐│❘｜￨׀",
  "[": "⁅⟦【〔❲［〚",
  "]": "⁆⟧】〕❳］〛",
  n: "ɴηпոꓠΝ",
  o: "оОοΟօᴏꓳⲟ",
  t: "тТτΤᴛꓔᎢ",
  e: "еЕεΕᴇꓰᎬҽ",
  s: "ѕЅꜱꓢᏚ",
});

const FOLD = new Map(Object.entries(CONFUSABLES).flatMap(([ascii, alikes]) => [...alikes].map((c) => [c, ascii] as const)));
const FOLDED = new RegExp(`[${[...FOLD.keys()].join("").replace(/[\]\\^-]/gu, "\\$&")}]`, "gu");

/**
 * The text with every look-alike of `FOLD` replaced by its ASCII character, index for index: what the notes-tag and
 * template-token checks read, so a tag spelled with a Cyrillic `о` or a `‹` is found where it stands.
 */
export function foldConfusables(text: string): string {
  return text.replace(FOLDED, (c) => FOLD.get(c) ?? c);
}

/**
 * Every white-space character — the line terminators LF, CR, VT, FF, NEL, U+2028 and U+2029 among them — and the
 * information separators U+001C–U+001F, which some readers (Python's `splitlines`) also break lines at. Each becomes
 * a space, and runs of spaces one: a lesson is one line whatever it holds.
 */
const SPACING = /[\p{White_Space}\u001c-\u001f]/gu;

/**
 * What a reader does not see but a tokenizer or a tag check does: control characters (NUL among them, which PostgreSQL's
 * text cannot hold), format characters (zero-width spaces and joiners, the word joiner, soft hyphens, the bidi
 * embeddings, overrides and isolates), every other default-ignorable code point (variation selectors, Hangul fillers,
 * tag characters) and lone surrogate halves. A zero-width joiner between emoji goes too: the emoji stay, side by side.
 */
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Cs}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * Anything that reads as a `<notes>` or `</notes>` tag once look-alikes are folded: any case, spaces or attributes
 * inside the angle brackets, or the tag left open (`</notes` at a lesson's end, which takes the rest up to the next
 * angle bracket with it). No word boundary after `notes`: `</notesSYSTEM:` reads as the tag and a role, so it goes too.
 */
const NOTES_TAG = /<\s*\/?\s*notes[^<>]*>?/giu;

/**
 * The chat-template control tokens of the families reflectkit serves and of the common ones, as text, once look-alikes
 * are folded (any case):
 * - `<|…|>`, whatever is inside: ChatML and Qwen (`<|im_start|>`, `<|im_end|>`, `<|endoftext|>`, `<|fim_prefix|>`,
 *   `<|repo_name|>`; SmolLM2 uses ChatML), Llama 3 (`<|begin_of_text|>`, `<|start_header_id|>`, `<|eot_id|>`,
 *   `<|eom_id|>`, `<|python_tag|>`), Phi (`<|system|>`, `<|user|>`, `<|assistant|>`, `<|end|>`), and DeepSeek's
 *   full-width `<｜…｜>` once NFKC has folded its bars;
 * - Llama 2 and Mistral: `<s>`, `</s>`, `<<SYS>>`, `<</SYS>>`, and `[INST]`, `[/INST]`, `[TOOL_CALLS]`,
 *   `[AVAILABLE_TOOLS]`, `[TOOL_RESULTS]`, `[SYSTEM_PROMPT]` and Mistral's other bracketed controls, opening or closing;
 * - Gemma (`<start_of_turn>`, `<end_of_turn>`, `<bos>`, `<eos>`, `<pad>`, its image markers), the sentencepiece and
 *   BERT specials (`<unk>`, `<mask>`, `<sep>`, `<cls>`), and the tags Qwen's and Hermes' tokenizers read as added tokens
 *   (`<think>`, `<tool_call>`, `<tool_response>`, opening or closing).
 * Square brackets are matched by name only, so `items[index]` in a lesson about code stays as it is.
 */
const TEMPLATE_TOKEN = new RegExp(
  [
    String.raw`<\|[^<>|]{1,64}\|>`,
    String.raw`<<\/?sys>>`,
    String.raw`\[\/?(?:inst|system_prompt|tool_calls|available_tools|tool_results|tool_content|img|img_break|img_end|prefix|middle|suffix|think|args|call_id)\]`,
    String.raw`<\/?(?:s|unk|pad|bos|eos|mask|sep|cls|bos_token|eos_token|start_of_turn|end_of_turn|start_of_image|end_of_image|think|tool_call|tool_response)>`,
  ].join("|"),
  "giu",
);

/** `text` with each match of `pattern` in its confusable fold replaced, the replacement given the original span. */
function replaceFolded(text: string, pattern: RegExp, replace: (span: string, folded: string) => string): string {
  let out = "";
  let from = 0;
  for (const match of foldConfusables(text).matchAll(pattern)) {
    out += text.slice(from, match.index) + replace(text.slice(match.index, match.index + match[0].length), match[0]);
    from = match.index + match[0].length;
  }
  return out + text.slice(from);
}

/**
 * Every notes tag out, until none is left: removing one can join the pieces around it into another
 * (`<</notes>/notes>`), so one pass is not enough.
 */
function withoutNotesTags(text: string): string {
  for (let previous = ""; previous !== text; ) {
    previous = text;
    text = replaceFolded(text, NOTES_TAG, () => "");
  }
  return text;
}

/**
 * A template token as a word in parentheses: `<|im_start|>` → `(im_start)`, `</s>` → `(/s)`, `[INST]` → `(INST)`,
 * `<</SYS>>` → `(/SYS)`. Its delimiters are gone, so no tokenizer that reads special tokens from text finds one, and
 * parentheses are neither a look-alike of a delimiter nor anything NFKC folds into one, so neither NFKC nor the
 * confusable fold brings the token back; the name stays, so a lesson that mentions a token still reads.
 */
function neutralised(span: string, folded: string): string {
  const open = folded.startsWith("<|") || folded.startsWith("<<") ? 2 : 1;
  const close = folded.endsWith("|>") || folded.endsWith(">>") ? 2 : 1;
  return `(${span.slice(open, span.length - close)})`;
}

/** One pass of the normalisation; `lessonText` repeats it until the text no longer changes. */
function normaliseOnce(text: string): string {
  const plain = text.normalize("NFKC").replace(SPACING, " ").replace(INVISIBLE, "");
  const untagged = withoutNotesTags(plain);
  return replaceFolded(untagged, TEMPLATE_TOKEN, neutralised).replace(/ {2,}/gu, " ").trim();
}

/** `normaliseOnce` until nothing changes: removing a character can join what was around it into a tag or a token. */
function settle(text: string): string {
  for (let previous = ""; previous !== text; ) {
    previous = text;
    text = normaliseOnce(text);
  }
  return text;
}

/**
 * Longest text normalised, in UTF-16 units: longer text is cut first, so the work a lesson costs is bounded whatever
 * was sent. Four times the lesson limit leaves room for what the normalisation removes.
 */
const MAX_INPUT_CHARS = 4 * maxLessonChars;

/**
 * A lesson as stored and as shown: NFKC; control, format, bidi and other invisible characters removed; every line
 * terminator and run of spacing one space, the ends trimmed; every notes tag removed, look-alikes included; every
 * chat-template control token rewritten as a word in parentheses; then cut to `maxLessonChars`. The result is one line
 * that cannot end a notes block or open a turn; "" when nothing is left (such a lesson is neither stored nor shown).
 * Idempotent: `lessonText(lessonText(t)) === lessonText(t)`.
 */
export function lessonText(text: string): string {
  let shown = settle(text.slice(0, MAX_INPUT_CHARS));
  // The cut can end on a space or a half of what the passes would change; cut and settle again until both hold.
  for (let capped = settle(capLesson(shown)); capped !== shown; capped = settle(capLesson(shown))) shown = capped;
  return shown;
}
