import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { generateJson, generateJsonCases, JSON_CASE_KINDS, MAX_TAGS, type JsonCaseKind } from "./generate.js";
import { SchemaCache } from "./schema-cache.js";
import { verifyJson } from "./verify.js";

const cases = [...generateJsonCases({ seed: 1, count: 50 }), ...generateJsonCases({ seed: 2024, count: 50 })];

/** The gold answer in each of the three places a reply may put it. */
function replies(gold: unknown): { name: string; text: string }[] {
  const compact = JSON.stringify(gold);
  const pretty = JSON.stringify(gold, null, 2);
  return [
    { name: "answer block", text: `<answer>${compact}</answer>` },
    { name: "answer block around a fence", text: `Let me fill it in.\n<answer>\n\`\`\`json\n${pretty}\n\`\`\`\n</answer>` },
    { name: "fenced block", text: `Here is the JSON:\n\n\`\`\`json\n${pretty}\n\`\`\`\n\nIt lists every field.` },
    { name: "bare in prose", text: `Sure! The record is ${compact} — I checked each field against the schema {as asked}.` },
  ];
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the corruptions reach into gold answers of five shapes
type Corruption = { name: string; change: (gold: any) => void; expect: RegExp };

/** Per kind: a missing property, a wrong type, a broken pattern (or enum) and one limit exceeded, with the line each must produce. */
const CORRUPTIONS: Record<JsonCaseKind, Corruption[]> = {
  person: [
    { name: "missing property", change: (g) => delete g.email, expect: /^\/: must have required property 'email' \(required\)$/mu },
    { name: "wrong type", change: (g) => (g.age = String(g.age)), expect: /^\/age: must be integer \(type\)$/mu },
    { name: "pattern broken", change: (g) => (g.email = g.email.toUpperCase()), expect: /^\/email: must match pattern ".*" \(pattern\)$/mu },
    { name: "out of range", change: (g) => (g.age = 131), expect: /^\/age: must be <= 130 \(maximum\)$/mu },
    { name: "extra property", change: (g) => (g.phone = "555"), expect: /^\/: must NOT have additional property 'phone' \(additionalProperties\)$/mu },
  ],
  "task-list": [
    { name: "missing property", change: (g) => delete g[0].priority, expect: /^\/0: must have required property 'priority' \(required\)$/mu },
    { name: "wrong type", change: (g) => (g[1].title = 7), expect: /^\/1\/title: must be string \(type\)$/mu },
    { name: "enum broken", change: (g) => (g[0].status = "finished"), expect: /^\/0\/status: must be one of "todo", "in-progress", "done" \(enum\)$/mu },
    { name: "empty list", change: (g) => g.splice(0), expect: /^\/: must NOT have fewer than 1 items \(minItems\)$/mu },
  ],
  contact: [
    { name: "missing property", change: (g) => delete g.address.city, expect: /^\/address: must have required property 'city' \(required\)$/mu },
    { name: "wrong type", change: (g) => (g.address.zip = Number(g.address.zip)), expect: /^\/address\/zip: must be string \(type\)$/mu },
    { name: "pattern broken", change: (g) => (g.address.zip = g.address.zip.slice(1)), expect: /^\/address\/zip: must match pattern "\^\[0-9\]\{5\}\$" \(pattern\)$/mu },
  ],
  article: [
    { name: "missing property", change: (g) => delete g.title, expect: /^\/: must have required property 'title' \(required\)$/mu },
    { name: "wrong type", change: (g) => (g.tags[0] = 1), expect: /^\/tags\/0: must be string \(type\)$/mu },
    {
      name: "item beyond maxItems",
      change: (g) => {
        for (let i = 0; g.tags.length <= MAX_TAGS; i++) g.tags.push(`extra-${i}`);
      },
      expect: /^\/tags: must NOT have more than 3 items \(maxItems\)$/mu,
    },
    { name: "repeated item", change: (g) => g.tags.push(g.tags[0]), expect: /^\/tags: must NOT have duplicate items .* \(uniqueItems\)$/mu },
  ],
  reading: [
    { name: "missing property", change: (g) => delete g.humidity, expect: /^\/: must have required property 'humidity' \(required\)$/mu },
    { name: "wrong type", change: (g) => (g.celsius += 0.5), expect: /^\/celsius: must be integer \(type\)$/mu },
    { name: "pattern broken", change: (g) => (g.sensor = g.sensor.toLowerCase()), expect: /^\/sensor: must match pattern ".*" \(pattern\)$/mu },
    { name: "below range", change: (g) => (g.celsius = -41), expect: /^\/celsius: must be >= -40 \(minimum\)$/mu },
  ],
};

describe("json generator", () => {
  it("is deterministic per seed and takes the kinds in turn", () => {
    assert.deepEqual(generateJsonCases({ seed: 7, count: 20 }), generateJsonCases({ seed: 7, count: 20 }));
    assert.notDeepEqual(generateJsonCases({ seed: 7, count: 20 }), generateJsonCases({ seed: 8, count: 20 }));
    const items = generateJsonCases({ seed: 7, count: 10 });
    assert.deepEqual(items.map((c) => c.kind), [...JSON_CASE_KINDS, ...JSON_CASE_KINDS]);
    assert.deepEqual(items.map((c) => c.id).slice(0, 2), ["gen-7-0", "gen-7-1"]);
    assert.deepEqual(generateJson({ seed: 7, count: 10 }), items.map(({ id, record }) => ({ id, record })));
  });

  it("states every fact of the gold answer in the prompt", () => {
    for (const c of cases) {
      for (const leaf of leaves(c.gold)) assert.ok(c.record.prompt.includes(String(leaf)), `${c.id}: ${JSON.stringify(leaf)} is not in "${c.record.prompt}"`);
    }
  });

  it("varies the facts: names, zips with leading zeros, negative temperatures", () => {
    const many = generateJsonCases({ seed: 3, count: 1000 });
    const of = (kind: JsonCaseKind) => many.filter((c) => c.kind === kind).map((c) => c.gold as any);
    assert.ok(new Set(of("person").map((g) => g.name)).size > 50);
    assert.ok(of("contact").some((g) => g.address.zip.startsWith("0")));
    assert.ok(of("reading").some((g) => g.celsius < 0));
    assert.deepEqual(new Set(of("article").map((g) => g.tags.length)), new Set([1, 2, 3]));
  });

  it("gold answers verify in an answer block, in a fenced block and bare in prose", () => {
    const schemas = new SchemaCache();
    for (const c of cases) {
      for (const { name, text } of replies(c.gold)) {
        const verdict = verifyJson(c.record, text, schemas);
        assert.equal(verdict.correct, true, `${c.id} (${c.kind}) ${name}: ${verdict.feedback}`);
        assert.equal(verdict.score, 1);
      }
    }
    // Five kinds, five fixed schemas: a hundred items (four hundred replies) compile five times.
    assert.equal(schemas.compileCount, JSON_CASE_KINDS.length);
  });

  it("corrupted answers fail, and the feedback names the JSON pointer and the keyword", () => {
    const schemas = new SchemaCache();
    for (const c of cases) {
      for (const corruption of CORRUPTIONS[c.kind]) {
        const gold = structuredClone(c.gold);
        corruption.change(gold);
        for (const { name, text } of replies(gold)) {
          const verdict = verifyJson(c.record, text, schemas);
          assert.equal(verdict.correct, false, `${c.id} (${c.kind}) ${corruption.name}, ${name}`);
          assert.equal(verdict.score, 0);
          assert.match(verdict.feedback, corruption.expect, `${c.id} (${c.kind}) ${corruption.name}, ${name}`);
        }
      }
    }
  });
});

function leaves(value: unknown): unknown[] {
  if (Array.isArray(value)) return value.flatMap(leaves);
  if (typeof value === "object" && value !== null) return Object.values(value).flatMap(leaves);
  return [value];
}
