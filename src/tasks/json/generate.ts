import { mulberry32, randomInt } from "../../util/random.js";
import type { TaskItem } from "../task.js";
import type { JsonRecord, JsonSchema } from "./record.js";

/**
 * Seeded structured-output items, for want of real benchmark data: small, realistic records whose prompt states
 * every fact the JSON must hold, so a model that follows the schema can succeed. Kinds take turns (item i is kind
 * i mod 5), so any ten items cover each twice; the seed picks the facts. Each kind exercises other keywords:
 *
 * - person: `pattern` (email), integer `minimum`/`maximum`, `required`, `additionalProperties: false` (2020-12);
 * - task-list: a top-level array of objects with `enum` fields and `minItems` (draft-07);
 * - contact: a nested object with a zip `pattern` whose leading zeros make it a string (no `$schema`: 2020-12);
 * - article: a string array with `minItems`/`maxItems`/`uniqueItems` (2020-12);
 * - reading: integer ranges, negative ones included (draft-07).
 *
 * Schemas are fixed per kind, so a thousand items compile five schemas.
 */
export type JsonCaseKind = "person" | "task-list" | "contact" | "article" | "reading";

export const JSON_CASE_KINDS: readonly JsonCaseKind[] = ["person", "task-list", "contact", "article", "reading"];

/** A generated item with the answer that satisfies it: for tests and conformance checks, never shown to a model. */
export interface JsonCase extends TaskItem<JsonRecord> {
  kind: JsonCaseKind;
  gold: unknown;
}

export function generateJson(options: { seed: number; count: number }): TaskItem<JsonRecord>[] {
  return generateJsonCases(options).map(({ id, record }) => ({ id, record }));
}

export function generateJsonCases(options: { seed: number; count: number }): JsonCase[] {
  const random = mulberry32(options.seed);
  return Array.from({ length: options.count }, (_, index) => {
    const kind = JSON_CASE_KINDS[index % JSON_CASE_KINDS.length] as JsonCaseKind;
    const { prompt, gold } = MAKERS[kind](random);
    return { id: `gen-${options.seed}-${index}`, kind, record: { prompt, schema: structuredClone(SCHEMAS[kind]) }, gold };
  });
}

const DRAFT_2020 = "https://json-schema.org/draft/2020-12/schema";
const DRAFT_07 = "http://json-schema.org/draft-07/schema#";

export const EMAIL_PATTERN = "^[a-z]+(\\.[a-z]+)?@example\\.(com|org)$";
export const ZIP_PATTERN = "^[0-9]{5}$";
export const SENSOR_PATTERN = "^[A-Z]-[0-9]{1,3}$";
export const TASK_STATUSES = ["todo", "in-progress", "done"] as const;
export const TASK_PRIORITIES = ["low", "medium", "high"] as const;
export const MAX_TAGS = 3;

const SCHEMAS: Record<JsonCaseKind, JsonSchema> = {
  person: {
    $schema: DRAFT_2020,
    type: "object",
    properties: {
      name: { type: "string", minLength: 1 },
      age: { type: "integer", minimum: 0, maximum: 130 },
      email: { type: "string", pattern: EMAIL_PATTERN },
    },
    required: ["name", "age", "email"],
    additionalProperties: false,
  },
  "task-list": {
    $schema: DRAFT_07,
    type: "array",
    minItems: 1,
    items: {
      type: "object",
      properties: {
        title: { type: "string", minLength: 1 },
        status: { enum: [...TASK_STATUSES] },
        priority: { type: "string", enum: [...TASK_PRIORITIES] },
      },
      required: ["title", "status", "priority"],
      additionalProperties: false,
    },
  },
  contact: {
    type: "object",
    properties: {
      name: { type: "string", minLength: 1 },
      address: {
        type: "object",
        properties: {
          street: { type: "string", minLength: 1 },
          city: { type: "string", minLength: 1 },
          zip: { type: "string", pattern: ZIP_PATTERN },
        },
        required: ["street", "city", "zip"],
        additionalProperties: false,
      },
    },
    required: ["name", "address"],
    additionalProperties: false,
  },
  article: {
    $schema: DRAFT_2020,
    type: "object",
    properties: {
      title: { type: "string", minLength: 1 },
      tags: { type: "array", items: { type: "string", minLength: 1 }, minItems: 1, maxItems: MAX_TAGS, uniqueItems: true },
    },
    required: ["title", "tags"],
    additionalProperties: false,
  },
  reading: {
    $schema: DRAFT_07,
    type: "object",
    properties: {
      sensor: { type: "string", pattern: SENSOR_PATTERN },
      celsius: { type: "integer", minimum: -40, maximum: 60 },
      humidity: { type: "integer", minimum: 0, maximum: 100 },
    },
    required: ["sensor", "celsius", "humidity"],
    additionalProperties: false,
  },
};

const FIRST_NAMES = ["Ada", "Grace", "Alan", "Katherine", "Edsger", "Barbara", "Donald", "Margaret", "Claude", "Frances", "John", "Radia", "Ken", "Hedy", "Dennis", "Annie", "Niklaus", "Adele", "Leslie", "Mary"];
const LAST_NAMES = ["Lovelace", "Hopper", "Turing", "Johnson", "Dijkstra", "Liskov", "Knuth", "Hamilton", "Shannon", "Allen", "Backus", "Perlman", "Thompson", "Lamarr", "Ritchie", "Easley", "Wirth", "Goldberg", "Lamport", "Keller"];
const STREETS = ["Elm Street", "Oak Avenue", "Maple Road", "Cedar Lane", "Harbor Drive", "Mill Street", "Park Place", "River Road"];
const CITIES = ["Springfield", "Riverton", "Fairview", "Lakeside", "Greenville", "Salem", "Madison", "Ashland"];
const TASK_TITLES = ["renew the passport", "book flights", "pay the electricity bill", "water the plants", "call the dentist", "file the tax return", "fix the bike", "buy a birthday gift", "back up the laptop", "clean the garage"];
const ARTICLE_TITLES = ["How to brew better coffee", "A beginner's guide to composting", "Why sleep matters", "Packing light for a week away", "Ten minutes of stretching a day", "Reading more books this year", "Baking sourdough at home", "Saving energy in winter"];
const TAGS = ["coffee", "kitchen", "morning", "garden", "health", "travel", "fitness", "books", "baking", "home", "energy", "habits"];

type Maker = (random: () => number) => { prompt: string; gold: unknown };

const MAKERS: Record<JsonCaseKind, Maker> = {
  person: (random) => {
    const first = pick(random, FIRST_NAMES);
    const last = pick(random, LAST_NAMES);
    const age = randomInt(random, 18, 90);
    const email = `${first.toLowerCase()}${random() < 0.5 ? `.${last.toLowerCase()}` : ""}@example.${random() < 0.7 ? "com" : "org"}`;
    return { prompt: `Return a JSON object for this person: ${first} ${last}, ${age}, ${email}.`, gold: { name: `${first} ${last}`, age, email } };
  },
  "task-list": (random) => {
    const tasks = sample(random, TASK_TITLES, randomInt(random, 2, 4)).map((title) => ({
      title,
      status: pick(random, TASK_STATUSES),
      priority: pick(random, TASK_PRIORITIES),
    }));
    const listed = tasks.map((t) => `"${t.title}" (status ${t.status}, priority ${t.priority})`).join("; ");
    return { prompt: `Return a JSON array with one object per task, in this order: ${listed}.`, gold: tasks };
  },
  contact: (random) => {
    const name = `${pick(random, FIRST_NAMES)} ${pick(random, LAST_NAMES)}`;
    const street = `${randomInt(random, 1, 250)} ${pick(random, STREETS)}`;
    const city = pick(random, CITIES);
    const zip = String(randomInt(random, 0, 99_999)).padStart(5, "0");
    return { prompt: `Return a JSON object for this contact: ${name}, who lives at ${street}, ${city}, zip code ${zip}.`, gold: { name, address: { street, city, zip } } };
  },
  article: (random) => {
    const title = pick(random, ARTICLE_TITLES);
    const tags = sample(random, TAGS, randomInt(random, 1, MAX_TAGS));
    return { prompt: `Return a JSON object for the article "${title}", tagged ${tags.join(", ")}.`, gold: { title, tags } };
  },
  reading: (random) => {
    const sensor = `${String.fromCharCode(65 + randomInt(random, 0, 25))}-${randomInt(random, 1, 999)}`;
    const celsius = randomInt(random, -40, 60);
    const humidity = randomInt(random, 0, 100);
    return { prompt: `Return a JSON object for this reading: sensor ${sensor} measured ${celsius} °C at ${humidity}% humidity.`, gold: { sensor, celsius, humidity } };
  },
};

function pick<T>(random: () => number, values: readonly T[]): T {
  return values[randomInt(random, 0, values.length - 1)] as T;
}

/** `count` distinct values, in a random order (a partial Fisher–Yates shuffle). */
function sample<T>(random: () => number, values: readonly T[], count: number): T[] {
  const pool = [...values];
  for (let i = 0; i < count; i++) {
    const j = randomInt(random, i, pool.length - 1);
    [pool[i], pool[j]] = [pool[j] as T, pool[i] as T];
  }
  return pool.slice(0, count);
}
