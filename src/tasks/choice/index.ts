export { extractChoice, locateChoice, normaliseOption, type ChoiceOptions, type ChoiceSource, type ExtractedChoice } from "./extract-choice.js";
export { answerCandidates, lastLine, phraseTails, stripDecoration, type AnswerCandidate, type AnswerSource } from "./final-answer.js";
export { parseOptionList, type OptionList } from "./option-list.js";
export { hostileOutputs } from "./hostile-outputs.js";
