/** A parameter schema as BFCL writes it (`type: "dict"`, `float`, `tuple`, …); other keys (`enum`, `default`) are kept. */
export interface BfclSchema {
  type?: string;
  description?: string;
  properties?: Record<string, BfclSchema>;
  required?: string[];
  items?: BfclSchema;
  [key: string]: unknown;
}

/** A function doc: the name may hold dots (`math.hypot`); `parameters` is a `dict` schema. */
export interface BfclFunction {
  name: string;
  description?: string;
  parameters: BfclSchema;
  [key: string]: unknown;
}

export interface BfclMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * One expected call, as in BFCL's possible-answer files: `{function_name: {parameter: [acceptable values…]}}`, one
 * key. A `""` among the values means the parameter may be left out; a value at a `dict` position is itself such a
 * map (`{key: [acceptable values…]}`), and an array of dicts is an array of such maps.
 */
export type BfclExpectedCall = Record<string, Record<string, unknown[]>>;

/**
 * A BFCL question record with its possible answer joined in: `question` is a list of turns, each a list of
 * messages (all single-turn in these categories), `function` the docs offered, `ground_truth` the expected calls
 * (order-free; empty for irrelevance, where the right answer is no call).
 */
export interface BfclRecord {
  id?: string;
  question: BfclMessage[][];
  function: BfclFunction[];
  ground_truth: BfclExpectedCall[];
}
