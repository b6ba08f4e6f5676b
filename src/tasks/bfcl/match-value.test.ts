import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { normalizeString, valueProblems } from "./match-value.js";
import { parsePythonLiteral } from "./python-literal.js";
import type { BfclSchema } from "./types.js";

/** The problems of a value written in Python against a schema and acceptable values, labelled `p`. */
function check(python: string, schema: BfclSchema, acceptable: unknown[]): string[] {
  return valueProblems(parsePythonLiteral(python), schema, acceptable, 'parameter "p"');
}

describe("normalizeString (BFCL's standardize_string)", () => {
  it("drops spaces and , . / - _ * ^, lowercases, and turns ' into \"", () => {
    assert.equal(normalizeString("April 1, 2024"), "april12024");
    assert.equal(normalizeString("New-York_City*^/."), "newyorkcity");
    assert.equal(normalizeString("it's"), 'it"s');
    assert.equal(normalizeString("Tab\there!"), "tab\there!");
  });

  it("makes values equal that BFCL counts equal, and only those", () => {
    const string: BfclSchema = { type: "string" };
    for (const value of ["'Paris, France'", "'paris france'", "'PARIS-FRANCE'", "'Paris_France.'", "' p a r i s , f r a n c e '"]) assert.deepEqual(check(value, string, ["Paris, France"]), [], value);
    for (const value of ["'Paris! France'", "'Paris\\tFrance'", "'Paris, Frankreich'", "'Paris; France'"]) {
      assert.deepEqual(check(value, string, ["Paris, France"]), [`parameter "p" = ${JSON.stringify(parsePythonLiteral(value).kind === "str" ? (parsePythonLiteral(value) as { value: string }).value : "")} is not an allowed value`], value);
    }
    assert.deepEqual(check(`"O'Brien"`, string, ['O"Brien']), []);
    assert.deepEqual(check("['NEW YORK', 'los-angeles']", { type: "array", items: { type: "string" } }, [["New York", "Los Angeles"]]), []);
    assert.deepEqual(check("{'city': 'SAN FRANCISCO'}", { type: "dict", properties: { city: { type: "string" } } }, [{ city: ["San Francisco"] }]), []);
  });
});

describe("valueProblems: types as BFCL's checker has them", () => {
  it("accepts an int for a float, never a float for an int, nor a bool or a string for a number", () => {
    assert.deepEqual(check("5", { type: "float" }, [5.0]), []);
    assert.deepEqual(check("5.0", { type: "float" }, [5]), []);
    assert.deepEqual(check("5", { type: "integer" }, [5]), []);
    assert.deepEqual(check("5.0", { type: "integer" }, [5]), ['parameter "p" = 5.0 should be an integer, not a float']);
    assert.deepEqual(check("True", { type: "integer" }, [1]), ['parameter "p" = True should be an integer, not a boolean']);
    assert.deepEqual(check("'5'", { type: "integer" }, [5]), ['parameter "p" = "5" should be an integer, not a string']);
    assert.deepEqual(check("5", { type: "string" }, ["5"]), ['parameter "p" = 5 should be a string, not an integer']);
    assert.deepEqual(check("1", { type: "boolean" }, [true]), ['parameter "p" = 1 should be a boolean, not an integer']);
    assert.deepEqual(check("[1, 2]", { type: "dict" }, [{ a: [1] }]), ['parameter "p" = [1, 2] should be a dict, not a list']);
  });

  it("takes a list for a tuple and a tuple for an array, and checks array items and dict properties", () => {
    assert.deepEqual(check("[3, 4]", { type: "tuple", items: { type: "integer" } }, [[3, 4]]), []);
    assert.deepEqual(check("(3, 4)", { type: "array", items: { type: "integer" } }, [[3, 4]]), []);
    assert.deepEqual(check("[1, 2.5]", { type: "array", items: { type: "float" } }, [[1.0, 2.5]]), []);
    assert.deepEqual(check("[1, 2.5]", { type: "array", items: { type: "integer" } }, [[1, 2]]), ['parameter "p"[1] = 2.5 should be an integer, not a float']);
    assert.deepEqual(check("[[1, 2], [3, '4']]", { type: "array", items: { type: "array", items: { type: "integer" } } }, [[[1, 2], [3, 4]]]), ['parameter "p"[1][1] = "4" should be an integer, not a string']);
    const budget: BfclSchema = { type: "dict", properties: { min: { type: "float" }, max: { type: "float" } } };
    assert.deepEqual(check("{'min': 300000, 'max': 400000.0}", budget, [{ min: [300000], max: [400000] }]), []);
    assert.deepEqual(check("{'min': '300000', 'max': 400000}", budget, [{ min: [300000], max: [400000] }]), ['parameter "p"["min"] = "300000" should be a float, not a string']);
  });

  it("accepts any value for `any` and untyped schemas, still checking the value", () => {
    assert.deepEqual(check("[1, 'a']", { type: "any" }, [[1, "A"]]), []);
    assert.deepEqual(check("3", {}, [3]), []);
    assert.deepEqual(check("4", { type: "mystery" }, [3]), ['parameter "p" = 4 is not an allowed value']);
  });

  it("treats a possible answer of another type than the schema's as BFCL does a variable: that type, compared exactly", () => {
    const array: BfclSchema = { type: "array", items: { type: "float" } };
    assert.deepEqual(check(`"data['sales']"`, array, ["data['sales']"]), []);
    assert.deepEqual(check(`"DATA['sales']"`, array, ["data['sales']"]), [`parameter "p" = "DATA['sales']" is not an allowed value`]);
    assert.deepEqual(check("[1.0]", array, ["data['sales']"]), ['parameter "p" = [1.0] is not an allowed value']);
    assert.deepEqual(check("None", { type: "float" }, ["", null]), []);
    assert.deepEqual(check("True", { type: "string" }, ["", true]), []);
    assert.deepEqual(check("['apple', 'banana']", { type: "array", items: { type: "integer" } }, [["apple", "banana"]]), []);
  });
});

describe("valueProblems: values", () => {
  it("compares numbers by value and says which value is wrong without naming the right one", () => {
    assert.deepEqual(check("20", { type: "integer" }, [20, 25]), []);
    assert.deepEqual(check("21", { type: "integer" }, [20, 25]), ['parameter "p" = 21 is not an allowed value']);
    assert.deepEqual(check("0.1", { type: "float" }, [0.1]), []);
    assert.deepEqual(check("''", { type: "string" }, ["", "units"]), []);
    assert.deepEqual(check("'kelvin'", { type: "string" }, ["celsius", ""]), ['parameter "p" = "kelvin" is not an allowed value']);
  });

  it("compares arrays whole, in order", () => {
    const teams: BfclSchema = { type: "array", items: { type: "string" } };
    assert.deepEqual(check("['Clippers', 'Lakers']", teams, [["Lakers", "Clippers"], ["Clippers", "Lakers"]]), []);
    assert.deepEqual(check("['Lakers']", teams, [["Lakers", "Clippers"]]), ['parameter "p" = ["Lakers"] is not an allowed value']);
    assert.deepEqual(check("[]", { type: "array", items: { type: "dict" } }, [[], ""]), []);
  });

  it("checks dicts key by key: unexpected and missing keys, optional keys, wrong values", () => {
    const conditions: BfclSchema = { type: "dict", properties: { department: { type: "string" }, school: { type: "string" }, year: { type: "integer" } } };
    const acceptable = [{ department: ["Science"], school: ["Bluebird High School", "Bluebird HS"], year: ["", 2024] }];
    assert.deepEqual(check("{'department': 'science', 'school': 'Bluebird HS'}", conditions, acceptable), []);
    assert.deepEqual(check("{'department': 'science', 'school': 'Bluebird HS', 'year': 2024}", conditions, acceptable), []);
    assert.deepEqual(check("{'department': 'Arts', 'school': 'Bluebird HS', 'club': 'chess'}", conditions, acceptable), [
      'parameter "p"["department"] = "Arts" is not an allowed value',
      'parameter "p" has an unexpected key "club"',
    ]);
    assert.deepEqual(check("{'department': 'Science'}", conditions, acceptable), ['parameter "p" is missing the key "school"']);
    assert.deepEqual(check("{}", conditions, [""]), ['parameter "p" = {} is not an allowed value']);
  });

  it("checks arrays of dicts item by item", () => {
    const schema: BfclSchema = { type: "array", items: { type: "dict", properties: { field: { type: "string" }, value: { type: "string" } } } };
    const acceptable = [[{ field: ["age"], value: ["25"] }, { field: ["job"], value: ["engineer"] }]];
    assert.deepEqual(check("[{'field': 'age', 'value': '25'}, {'field': 'job', 'value': 'Engineer'}]", schema, acceptable), []);
    assert.deepEqual(check("[{'field': 'age', 'value': '30'}, {'field': 'job', 'value': 'engineer'}]", schema, acceptable), ['parameter "p"[0]["value"] = "30" is not an allowed value']);
    assert.deepEqual(check("[{'field': 'age', 'value': '25'}]", schema, acceptable), ['parameter "p" has 1 item, which is not an allowed number']);
    assert.deepEqual(check("[{'field': 'age', 'value': 25}, {'field': 'job', 'value': 'engineer'}]", schema, acceptable), ['parameter "p"[0]["value"] = 25 should be a string, not an integer']);
  });
});
