import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseBfclRecord } from "./record.js";
import { verifyBfcl } from "./verify.js";
import { pythonType } from "./xlam.js";

const doc = { name: "math.hypot", description: "Hypotenuse.", parameters: { type: "dict", properties: { x: { type: "integer" }, y: { type: "integer" } }, required: ["x", "y"] } };

describe("parseBfclRecord", () => {
  it("keeps a BFCL record as it is, and accepts a string question, a flat message list and a single doc", () => {
    const record = { id: "simple_python_2", question: [[{ role: "user", content: "Hypotenuse of 4 and 5?" }]], function: [doc], ground_truth: [{ "math.hypot": { x: [4], y: [5], z: ["", 0] } }] };
    assert.deepEqual(parseBfclRecord(record), record);
    assert.deepEqual(parseBfclRecord({ ...record, id: 7, question: "Hypotenuse of 4 and 5?", function: doc }), { ...record, id: "7" });
    assert.deepEqual(parseBfclRecord({ ...record, question: [{ role: "user", content: "Hypotenuse of 4 and 5?" }] }), record);
  });

  it("says which field is wrong", () => {
    const good = { question: "q", function: [doc], ground_truth: [] };
    const cases: Array<[unknown, RegExp]> = [
      [null, /must be an object/],
      [{ ...good, question: [] }, /"question" must be a non-empty list/],
      [{ ...good, question: [[{ role: "robot", content: "q" }]] }, /question\[0\]\[0\]: role must be/],
      [{ ...good, question: [[{ role: "system", content: "be brief" }]] }, /"question" has no user message/],
      [{ ...good, function: [] }, /"function" must be a non-empty list/],
      [{ ...good, function: [{ description: "no name" }] }, /function\[0\] has no "name" string/],
      [{ ...good, function: [{ ...doc, parameters: { properties: [] } }] }, /"parameters.properties" must be an object/],
      [{ ...good, function: [{ ...doc, parameters: { required: "x" } }] }, /"parameters.required" must be a list of names/],
      [{ question: "q", function: [doc] }, /"ground_truth" is missing/],
      [{ ...good, ground_truth: [{ a: {}, b: {} }] }, /ground_truth\[0\] must be an object with one key/],
      [{ ...good, ground_truth: [{ "math.hypot": { x: 4 } }] }, /parameter "x" must map to a list of acceptable values/],
      [{ id: "simple_1", ground_truth: [] }, /this is a possible-answer record/],
      [{ ...good, id: { a: 1 } }, /"id" must be a string or a number/],
    ];
    for (const [value, message] of cases) assert.throws(() => parseBfclRecord(value), message, JSON.stringify(value));
  });
});

/** Records in the APIGen / xLAM format (`xlam-function-calling-60k`): `tools` and `answers` are JSON strings. */
const giveaways = {
  id: 0,
  query: "Where can I find live giveaways for beta access and games?",
  answers: JSON.stringify([
    { name: "live_giveaways_by_type", arguments: { type: "beta" } },
    { name: "live_giveaways_by_type", arguments: { type: "game" } },
  ]),
  tools: JSON.stringify([
    {
      name: "live_giveaways_by_type",
      description: "Retrieve live giveaways from the GamerPower API based on the specified type.",
      parameters: { type: { description: "The type of giveaways to retrieve (e.g., game, loot, beta).", type: "str", default: "game" } },
    },
  ]),
};

const loans = {
  id: 17,
  query: "Monthly payment for a 200000 loan at 3.5% over 30 years, and the sum of [1, 2, 3].",
  tools: [
    {
      name: "monthly_mortgage_payment",
      description: "Calculates the monthly mortgage payment.",
      parameters: {
        loan_amount: { description: "The total amount of the loan.", type: "float" },
        annual_interest_rate: { description: "The annual interest rate as a decimal.", type: "float" },
        loan_term_years: { description: "The loan term in years.", type: "int" },
        currency: { description: "Currency code.", type: "str, optional", default: "USD" },
      },
    },
    { name: "sum_list", description: "Sums numbers.", parameters: { numbers: { description: "The numbers.", type: "List[int]" }, options: { description: "Options.", type: "Dict[str, Any]", default: "" } } },
  ],
  answers: [
    { name: "monthly_mortgage_payment", arguments: { loan_amount: 200000, annual_interest_rate: 0.035, loan_term_years: 30 } },
    { name: "sum_list", arguments: { numbers: [1, 2, 3], options: { precision: "high", round: true } } },
  ],
};

describe("APIGen / xLAM records", () => {
  it("become BFCL records: Python types mapped, answers as expected calls, defaults allowed for left-out parameters", () => {
    const record = parseBfclRecord(giveaways);
    assert.deepEqual(record, {
      id: "0",
      question: [[{ role: "user", content: giveaways.query }]],
      function: [
        {
          name: "live_giveaways_by_type",
          description: "Retrieve live giveaways from the GamerPower API based on the specified type.",
          parameters: { type: "dict", properties: { type: { description: "The type of giveaways to retrieve (e.g., game, loot, beta).", type: "string", default: "game" } }, required: [] },
        },
      ],
      ground_truth: [{ live_giveaways_by_type: { type: ["beta"] } }, { live_giveaways_by_type: { type: ["game"] } }],
    });
    const other = parseBfclRecord(loans);
    assert.deepEqual(other.ground_truth, [
      { monthly_mortgage_payment: { loan_amount: [200000], annual_interest_rate: [0.035], loan_term_years: [30], currency: ["", "USD"] } },
      { sum_list: { numbers: [[1, 2, 3]], options: [{ precision: ["high"], round: [true] }] } },
    ]);
    assert.deepEqual(other.function[1]?.parameters.properties?.numbers, { description: "The numbers.", type: "array", items: { type: "integer" } });
  });

  it("verify like BFCL records", () => {
    const record = parseBfclRecord(loans);
    const good = [
      '<answer>[{"name": "sum_list", "arguments": {"numbers": [1, 2, 3], "options": {"round": true, "precision": "HIGH"}}}, {"name": "monthly_mortgage_payment", "arguments": {"loan_amount": 200000.0, "annual_interest_rate": 0.035, "loan_term_years": 30}}]</answer>',
      "<answer>[monthly_mortgage_payment(loan_amount=200000, annual_interest_rate=0.035, loan_term_years=30, currency='usd'), sum_list(numbers=(1, 2, 3), options={'precision': 'high', 'round': True})]</answer>",
    ];
    for (const output of good) assert.equal(verifyBfcl(record, output).correct, true, verifyBfcl(record, output).feedback);
    const wrong: Array<[string, string]> = [
      [
        "<answer>[monthly_mortgage_payment(loan_amount=200000, annual_interest_rate=3.5, loan_term_years=30), sum_list(numbers=[1, 2, 3], options={'precision': 'high', 'round': True})]</answer>",
        'call 1 (monthly_mortgage_payment): parameter "annual_interest_rate" = 3.5 is not an allowed value',
      ],
      [
        "<answer>[monthly_mortgage_payment(loan_amount=200000, annual_interest_rate=0.035, loan_term_years=30, currency='EUR'), sum_list(numbers=[1, 2, 3], options={'precision': 'high', 'round': True})]</answer>",
        'call 1 (monthly_mortgage_payment): parameter "currency" = "EUR" is not an allowed value',
      ],
      [
        "<answer>[monthly_mortgage_payment(loan_amount=200000, annual_interest_rate=0.035, loan_term_years=30.0), sum_list(numbers=[1, 2, 3], options={'precision': 'high'})]</answer>",
        'call 1 (monthly_mortgage_payment): parameter "loan_term_years" = 30.0 should be an integer, not a float; call 2 (sum_list): parameter "options" is missing the key "round"',
      ],
    ];
    for (const [output, problem] of wrong) {
      const verdict = verifyBfcl(record, output);
      assert.equal(verdict.correct, false);
      assert.equal(verdict.feedback, `The calls do not match: ${problem}.`);
    }
    const giveaway = parseBfclRecord(giveaways);
    assert.equal(verifyBfcl(giveaway, '<answer>[{"name": "live_giveaways_by_type", "arguments": {"type": "game"}}, {"name": "live_giveaways_by_type", "arguments": {"type": "beta"}}]</answer>').correct, true);
    assert.equal(verifyBfcl(giveaway, '<answer>[{"name": "live_giveaways_by_type", "arguments": {"type": "beta"}}]</answer>').feedback, "The calls do not match: expected 2 calls, got 1.");
  });

  it("map Python type notation to BFCL types", () => {
    const cases: Array<[string, string, unknown]> = [
      ["str", "string", undefined],
      ["int, optional", "integer", undefined],
      ["Optional[float]", "float", undefined],
      ["bool", "boolean", undefined],
      ["List[str]", "array", { type: "string" }],
      ["List[List[int]]", "array", { type: "array", items: { type: "integer" } }],
      ["list", "array", undefined],
      ["List[Any]", "array", undefined],
      ["Dict[str, int]", "dict", undefined],
      ["Tuple[int, int]", "tuple", undefined],
      ["Union[int, float]", "any", undefined],
      ["Callable", "any", undefined],
    ];
    for (const [text, type, items] of cases) assert.deepEqual(pythonType(text), { type, items }, text);
  });

  it("say which field is wrong", () => {
    const cases: Array<[unknown, RegExp]> = [
      [{ ...giveaways, query: "" }, /"query" must be a non-empty string/],
      [{ ...giveaways, tools: "[{bad json" }, /field "tools" is a string but not valid JSON/],
      [{ ...giveaways, tools: "[]" }, /"tools" must be a non-empty list/],
      [{ ...giveaways, tools: '[{"description": "no name"}]' }, /tools\[0\] must be an object with a "name" string/],
      [{ ...giveaways, tools: '[{"name": "f", "parameters": {"a": "str"}}]' }, /parameter "a" must be an object \{type, description, default\}/],
      [{ ...giveaways, answers: '{"name": "f"}' }, /"answers" must be a list/],
      [{ ...giveaways, answers: '[{"arguments": {}}]' }, /answers\[0\] must be an object with a "name" string/],
      [{ ...giveaways, answers: '[{"name": "f", "arguments": [1]}]' }, /answers\[0\] \("f"\): "arguments" must be an object/],
    ];
    for (const [value, message] of cases) assert.throws(() => parseBfclRecord(value), message);
  });
});
