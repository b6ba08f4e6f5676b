import type { InstructionSpec } from "./instruction.js";
import { plural, pyStrip, quote } from "./python-text.js";

/** `combination:*` (upstream TwoResponsesChecker, RepeatPromptThenAnswer). */

export const twoResponses: InstructionSpec<"combination:two_responses"> = {
  id: "combination:two_responses",
  keys: [],
  parse: () => ({ id: "combination:two_responses" }),
  check(_, response) {
    const pieces = response.split("******");
    const valid: string[] = [];
    for (let i = 0; i < pieces.length; i++) {
      const piece = pyStrip(pieces[i] as string);
      if (piece !== "") valid.push(piece);
      else if (i !== 0 && i !== pieces.length - 1) {
        return { followed: false, reason: `part ${i + 1} between two ****** separators is empty; need exactly 2 responses separated by one ******` };
      }
    }
    if (valid.length !== 2) return { followed: false, reason: `found ${plural(valid.length, "response")} separated by ******, need exactly 2` };
    if (valid[0] === valid[1]) return { followed: false, reason: "the two responses separated by ****** are identical; they must differ" };
    return { followed: true, reason: "two different responses separated by ******" };
  },
};

/** The response, stripped and lower-cased, must begin with the prompt to repeat, stripped and lower-cased. */
export const repeatPrompt: InstructionSpec<"combination:repeat_prompt"> = {
  id: "combination:repeat_prompt",
  keys: ["prompt_to_repeat"],
  parse(kwargs) {
    const promptToRepeat = kwargs.text("prompt_to_repeat");
    if (pyStrip(promptToRepeat) === "") throw new Error('"prompt_to_repeat" must not be empty');
    return { id: "combination:repeat_prompt", promptToRepeat };
  },
  check({ promptToRepeat }, response) {
    const want = pyStrip(promptToRepeat).toLowerCase();
    const got = pyStrip(response).slice(0, want.length + 1).toLowerCase();
    if (got.startsWith(want)) return { followed: true, reason: "begins with the request repeated word for word" };
    let at = 0;
    while (at < want.length && at < got.length && want.charCodeAt(at) === got.charCodeAt(at)) at++;
    const shown = (text: string) => quote(text.slice(Math.max(0, at - 10), at + 30), 60);
    const where = at >= got.length ? "the reply stops" : `the reply has ${shown(got)}`;
    return {
      followed: false,
      reason: `does not begin with the request repeated word for word (case aside): from character ${at + 1} the request has ${shown(want)}, ${where}`,
    };
  },
};
