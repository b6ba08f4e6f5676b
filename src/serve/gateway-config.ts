/**
 * The reader of the gateway's config file (`reflect serve --config gateway.yaml`): YAML, or JSON read by the same parser,
 * validated whole before any model is opened. Every problem is an `InputError` that says `FILE:LINE: FIELD: what is
 * wrong`, the field written as the file writes it (`policies.strict.reflect.max_turns`, `models[1].fallbacks[0]`).
 *
 * The file is an operator's, but it is read as hostile all the same: at most `configFileLimits.bytes`, UTF-8 only,
 * aliases bounded (an alias bomb stops at `configFileLimits.aliases`), duplicate keys refused, and a value that looks
 * like a secret key refused without being repeated — a config file names the variable that holds a key (`key_env`),
 * never the key.
 */
import { readFileSync, statSync } from "node:fs";
import { isAlias, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, visit, type Document, type Node } from "yaml";
import { InputError, ModelNotFoundError, RequestFieldError, UsageError } from "../errors.js";
import { TENANT_NAME } from "../core/tenant.js";
import { MEMORY_KEY } from "../memory/request-lesson-store.js";
import { parseModelSpec } from "../models/spec.js";
import { isRecord } from "../util/is-record.js";
import { dialectNames, type DialectName } from "./dialects/index.js";
import { upstreamSendFields, type ConfiguredModel, type GatewayConfig, type GatewayPolicy, type PolicyAttachment, type UpstreamSend } from "./gateway-config-types.js";
import { parseReflect, type RequestBounds } from "./loop-request.js";
import { ROUTE_NAME } from "./policy.js";

/** What the reader takes of a config file at most. */
export const configFileLimits = Object.freeze({
  /** Bytes of the file (1 MiB): a config is a page or two, not a data set. */
  bytes: 1024 * 1024,
  /** Alias expansions while reading (YAML's `*name`): a few are a convenience, thousands are a bomb. */
  aliases: 100,
});

/** What a config is checked against: the gateway's caps, the tenants of its keys, the judges it was started with. */
export interface GatewayConfigContext {
  bounds: RequestBounds;
  /** The tenants of the keys given at start (`local` on a keyless gateway): the only ones an attachment may name. */
  tenants: readonly string[];
  /** The `--judge` specs: with the configured models' names, what a policy's `reflect.judge` may name. */
  judges: readonly string[];
}

/** A model's name as clients send it in `model`. */
const MODEL_NAME = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]{0,127}$/u;
/** An environment variable's name. */
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/u;
/** The templates a policy's `reflect.memory.key` may hold, filled per request. */
export const MEMORY_KEY_TEMPLATES: readonly string[] = ["{tenant}", "{model}", "{route}", "{system_hash}"];

const topFields = new Set(["models", "default_model", "policies", "attachments", "default_policy"]);
const modelFields = new Set(["name", "spec", "speaks", "key_env", "fallbacks", "send"]);
const policyFields = new Set(["reflect", "allow_opt_out"]);
const attachmentFields = new Set(["policy", "tenant", "model", "route"]);
/** Fields that would hold a key itself, refused with the pointer to `key_env`. */
const keyFields = new Set(["key", "api_key", "apikey", "api-key", "token", "secret", "password", "authorization"]);
const SECRET_REFUSAL = "looks like a secret key, and a config file never holds one — put the key in an environment variable and name that variable in key_env";

/** A place in the file: the keys and indexes from the top. */
type Path = readonly (string | number)[];

/** The field a path names, as the file writes it: `policies.strict.reflect.max_turns`, `models[0].spec`. */
export function fieldOfPath(path: Path): string {
  return path.map((part, i) => (typeof part === "number" ? `[${part}]` : i === 0 ? part : `.${part}`)).join("");
}

/** Finds the line of each place in the parsed document, and throws the error that names it. */
class Locator {
  constructor(
    private readonly doc: Document,
    private readonly lines: LineCounter,
    readonly source: string,
  ) {}

  /** The 1-based line of the value at `path` (of its key, with `key`), or of the nearest place above it that exists. */
  line(path: Path, key = false): number {
    let node: unknown = this.doc.contents;
    let found: Node | undefined = isNodeLike(node) ? node : undefined;
    for (const [i, part] of path.entries()) {
      if (isAlias(node)) node = node.resolve(this.doc);
      let next: unknown;
      if (isMap(node)) {
        const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(part));
        next = pair === undefined ? undefined : key && i === path.length - 1 ? pair.key : (pair.value ?? pair.key);
      } else if (isSeq(node) && typeof part === "number") {
        next = node.items[part];
      }
      if (!isNodeLike(next)) break;
      node = next;
      found = next;
    }
    const offset = found?.range?.[0] ?? 0;
    return this.lines.linePos(offset).line;
  }

  /** Throws `FILE:LINE: FIELD: message` for the value at `path` (its key's line with `key`). */
  fail(path: Path, message: string, key = false): never {
    throw new InputError(path.length === 0 ? message : `${fieldOfPath(path)}: ${message}`, this.source, this.line(path, key));
  }
}

function isNodeLike(value: unknown): value is Node {
  return typeof value === "object" && value !== null && "range" in value;
}

/**
 * Reads and validates the config file: at most 1 MiB of UTF-8 (a leading BOM is skipped), YAML or JSON. Throws
 * `InputError` naming the file, the line and the field.
 */
export function readGatewayConfig(file: string, context: GatewayConfigContext): GatewayConfig {
  let bytes: Buffer;
  try {
    const size = statSync(file).size;
    if (size > configFileLimits.bytes) throw new InputError(`the config file is ${size} bytes; at most ${configFileLimits.bytes} (1 MiB) are read — a gateway's config is a page or two`, file);
    bytes = readFileSync(file);
  } catch (error) {
    if (InputError.isInstance(error)) throw error;
    throw new InputError(`cannot read the config file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}) — pass a YAML or JSON file to --config`, file, undefined, { cause: error });
  }
  if (bytes.length > configFileLimits.bytes) throw new InputError(`the config file is over ${configFileLimits.bytes} bytes (1 MiB)`, file);
  return parseGatewayConfig(utf8Text(bytes, file), file, context);
}

/** The file's text, or an error naming the first line that is not UTF-8. */
function utf8Text(bytes: Buffer, file: string): string {
  const decoder = new TextDecoder("utf-8", { fatal: true });
  try {
    return decoder.decode(bytes);
  } catch (error) {
    let start = 0;
    for (let line = 1; ; line += 1) {
      const end = bytes.indexOf(0x0a, start);
      try {
        decoder.decode(bytes.subarray(start, end < 0 ? bytes.length : end));
      } catch {
        throw new InputError("this line is not UTF-8 text — save the file as UTF-8", file, line, { cause: error });
      }
      if (end < 0) throw new InputError("the config file is not UTF-8 text — save it as UTF-8", file, undefined, { cause: error });
      start = end + 1;
    }
  }
}

/** Where the first alias (`*name`) of the document is, and the field that holds it. */
function firstAlias(doc: Document): { offset: number; field: string } {
  let found: { offset: number; field: string } = { offset: 0, field: "" };
  visit(doc, {
    Alias(_key, node, path) {
      const parts: (string | number)[] = [];
      path.forEach((step, i) => {
        const next = path[i + 1] ?? node;
        if (isPair(step) && isScalar(step.key)) parts.push(String(step.key.value));
        else if (isSeq(step)) parts.push(step.items.indexOf(next as never));
      });
      found = { offset: node.range?.[0] ?? 0, field: fieldOfPath(parts) };
      return visit.BREAK;
    },
  });
  return found;
}

/** The config in `text` (read from `source`, which errors name), validated. Pure: reads no file and opens no model. */
export function parseGatewayConfig(text: string, source: string, context: GatewayConfigContext): GatewayConfig {
  if (text.length > configFileLimits.bytes) throw new InputError(`the config file is over ${configFileLimits.bytes} bytes (1 MiB)`, source);
  const body = text.startsWith("\uFEFF") ? text.slice(1) : text;
  if (body.trim() === "") throw new InputError("the config file is empty — write a map with any of models, default_model, policies, attachments, default_policy (see examples/gateway.yaml)", source, 1);
  const { doc, lines } = parseYaml(body, source);
  const at: Locator = new Locator(doc, lines, source);
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: configFileLimits.aliases });
  } catch (error) {
    if (!/alias/iu.test((error as Error)?.message ?? "")) throw error;
    const alias = firstAlias(doc);
    throw new InputError(`${alias.field === "" ? "" : `${alias.field}: `}the file expands its aliases (*name) more than ${configFileLimits.aliases} times — write the values out`, source, lines.linePos(alias.offset).line, { cause: error });
  }
  if (data === null || data === undefined) throw new InputError("the config file holds no value — write a map with any of models, default_model, policies, attachments, default_policy", source, 1);
  if (!isRecord(data)) at.fail([], "the top level must be a map of models, default_model, policies, attachments, default_policy");
  screenSecrets(data, [], at);
  refuseUnknown(data, [], topFields, at);
  const models = readModels(data.models, at);
  const modelNames = new Set(models.map((m) => m.name));
  const defaultModel = optionalName(data.default_model, ["default_model"], MODEL_NAME, at);
  if (defaultModel !== undefined && !modelNames.has(defaultModel)) at.fail(["default_model"], `names no configured model — ${listed("models", modelNames)}`);
  const policies = readPolicies(data.policies, at, { ...context, modelNames });
  const policyNames = new Set(policies.map((p) => p.name));
  const attachments = readAttachments(data.attachments, at, { tenants: new Set(context.tenants), modelNames, policyNames });
  const defaultPolicy = optionalName(data.default_policy, ["default_policy"], TENANT_NAME, at);
  if (defaultPolicy !== undefined && !policyNames.has(defaultPolicy)) at.fail(["default_policy"], `names no policy — ${listed("policies", policyNames)}`);
  return {
    source,
    models,
    ...(defaultModel === undefined ? {} : { defaultModel }),
    policies,
    attachments,
    ...(defaultPolicy === undefined ? {} : { defaultPolicy }),
  };
}

/** The document, or the first syntax error as `FILE:LINE: what is wrong` (the parser's words, never the file's text). */
function parseYaml(text: string, source: string): { doc: Document; lines: LineCounter } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false, uniqueKeys: true, strict: true });
  const error = doc.errors[0] ?? doc.warnings[0];
  if (error !== undefined) {
    const line = lines.linePos(error.pos[0]).line;
    const field = fieldOfPath(pathAt(doc.contents, error.pos[0]));
    throw new InputError(`${field === "" ? "" : `${field}: `}${syntaxMessage(error.code, error.message)}`, source, line);
  }
  return { doc, lines };
}

/** The keys and indexes down to the innermost value (or key) starting at or before `offset`: where a parse error is. */
function pathAt(node: unknown, offset: number): (string | number)[] {
  const before = (n: unknown): boolean => isNodeLike(n) && n.range !== undefined && n.range !== null && n.range[0] <= offset;
  if (isMap(node)) {
    const pair = node.items.findLast((p) => before(p.key));
    if (pair === undefined || !isScalar(pair.key)) return [];
    return [String(pair.key.value), ...(before(pair.value) ? pathAt(pair.value, offset) : [])];
  }
  if (isSeq(node)) {
    const i = node.items.findLastIndex(before);
    return i < 0 ? [] : [i, ...pathAt(node.items[i], offset)];
  }
  return [];
}

/** A parse error in words that say what to do. The parser's message is kept only where it holds none of the file's text. */
function syntaxMessage(code: string, message: string): string {
  switch (code) {
    case "DUPLICATE_KEY":
      return "a key is given twice in one map — keep one";
    case "TAB_AS_INDENT":
      return "a tab indents this line — YAML indents with spaces";
    case "MULTIPLE_DOCS":
      return "the file holds several YAML documents (---) — a config is one";
    default:
      return `not valid YAML or JSON (${code.toLowerCase().replaceAll("_", " ")}${looksLikeSecret(message) ? "" : `: ${message.split("\n")[0]?.slice(0, 160)}`})`;
  }
}

/** A string that looks like a key itself: an OpenAI-style `sk-…`, a `Bearer …` header value, a URL with a password. */
export function looksLikeSecret(text: string): boolean {
  return /\bsk-[A-Za-z0-9_-]{8,}/u.test(text) || /\bBearer\s+\S{8,}/iu.test(text) || /:\/\/[^\s/@:]*:[^\s/@]+@/u.test(text);
}

/** Refuses, anywhere in the file, a value (or a key) that looks like a secret, and a key field in a model; never repeating it. */
function screenSecrets(value: unknown, path: Path, at: Locator): void {
  if (typeof value === "string") {
    if (looksLikeSecret(value)) at.fail(path, SECRET_REFUSAL);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((item, i) => screenSecrets(item, [...path, i], at));
    return;
  }
  if (!isRecord(value)) return;
  const inModel = path.length === 2 && path[0] === "models";
  for (const [key, item] of Object.entries(value)) {
    if (looksLikeSecret(key)) at.fail(path, `a key of this map ${SECRET_REFUSAL}`);
    if ((inModel || path.length === 0) && keyFields.has(key.toLowerCase())) at.fail([...path, key], "would hold a key itself, and a config file never holds one — put the key in an environment variable and name that variable in key_env", true);
    screenSecrets(item, [...path, key], at);
  }
}

/** Refuses the first key of `record` not in `allowed`, naming the allowed ones. */
function refuseUnknown(record: Record<string, unknown>, path: Path, allowed: ReadonlySet<string>, at: Locator): void {
  for (const key of Object.keys(record)) {
    if (!allowed.has(key)) at.fail([...path, key], `is not a field here; use ${[...allowed].join(", ")}`, true);
  }
}

/** An optional name matching `pattern` (null counts as absent). */
function optionalName(value: unknown, path: Path, pattern: RegExp, at: Locator): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string" || !pattern.test(value)) at.fail(path, `must be a name: ${pattern === MODEL_NAME ? "1–128 letters, digits or ._:@/+-" : "1–64 letters, digits or ._-"}${pattern === ROUTE_NAME ? " (as the x-reflect-route header takes it)" : ", starting with a letter or digit"}`);
  return value;
}

function listed(what: string, names: ReadonlySet<string>): string {
  return names.size === 0 ? `the file configures no ${what}` : `the ${what} are ${[...names].join(", ")}`;
}

/** A list field: absent (or null) is empty; anything but a list is refused. */
function listOf(value: unknown, path: Path, at: Locator, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) at.fail(path, `must be a list of ${what}`);
  return value;
}

/** `models`: each a name, a spec, what it speaks, its key's variable and its fallbacks; names unique, fallbacks acyclic. */
function readModels(value: unknown, at: Locator): ConfiguredModel[] {
  const models = listOf(value, ["models"], at, "models ({ name, spec, speaks?, key_env?, fallbacks?, send? })").map((entry, i) => readModel(entry, ["models", i], at));
  const index = new Map<string, number>();
  models.forEach((model, i) => {
    if (index.has(model.name)) at.fail(["models", i, "name"], `${model.name} is configured twice (also models[${index.get(model.name)}]) — give each model its own name`);
    index.set(model.name, i);
  });
  models.forEach((model, i) =>
    model.fallbacks.forEach((name, j) => {
      if (!index.has(name)) at.fail(["models", i, "fallbacks", j], `names no configured model — the models are ${[...index.keys()].join(", ")}`);
      if (name === model.name) at.fail(["models", i, "fallbacks", j], "names the model itself — a fallback is another model");
    }),
  );
  refuseFallbackCycles(models, index, at);
  return models;
}

function readModel(entry: unknown, path: Path, at: Locator): ConfiguredModel {
  if (!isRecord(entry)) at.fail(path, "must be a map { name, spec, speaks?, key_env?, fallbacks?, send? }");
  refuseUnknown(entry, path, modelFields, at);
  const name = optionalName(entry.name, [...path, "name"], MODEL_NAME, at);
  if (name === undefined) at.fail([...path, "name"], "is required: the name clients send as model");
  if (typeof entry.spec !== "string" || entry.spec.trim() === "") at.fail([...path, "spec"], "is required: the model spec, as --upstream takes it (smollm2-135m, a .gguf path, http(s)://host/v1#model, provider:model)");
  let kind: string;
  try {
    kind = parseModelSpec(entry.spec).kind;
  } catch (error) {
    if (!UsageError.isInstance(error) && !ModelNotFoundError.isInstance(error)) throw error;
    at.fail([...path, "spec"], (error as Error).message);
  }
  const speaks = readSpeaks(entry.speaks, [...path, "speaks"], kind === "http", at);
  const keyEnv = entry.key_env;
  if (keyEnv !== undefined && keyEnv !== null && (typeof keyEnv !== "string" || !ENV_NAME.test(keyEnv))) {
    at.fail([...path, "key_env"], "must be the name of the environment variable that holds the key (letters, digits and _, e.g. UPSTREAM_KEY), never the key itself");
  }
  if (typeof keyEnv === "string" && kind !== "http" && kind !== "provider") at.fail([...path, "key_env"], "names a key for a model served elsewhere (http(s)://… or provider:model); this one runs in the gateway");
  const fallbacks = listOf(entry.fallbacks, [...path, "fallbacks"], at, "model names").map((f, j) => {
    if (typeof f !== "string" || !MODEL_NAME.test(f)) at.fail([...path, "fallbacks", j], "must be the name of a configured model");
    return f;
  });
  const send = readSend(entry.send, [...path, "send"], kind, at);
  return { name, spec: entry.spec.trim(), speaks, ...(typeof keyEnv === "string" ? { keyEnv } : {}), fallbacks, ...(send.length === 0 ? {} : { send }) };
}

/** `send`: the request fields the model's upstream takes besides messages and sampling (`UpstreamSend`); default none. */
function readSend(value: unknown, path: Path, kind: string, at: Locator): UpstreamSend[] {
  if (value === undefined || value === null) return [];
  if (kind !== "http" && kind !== "provider") at.fail(path, "names fields for a model served elsewhere (http(s)://… or provider:model); this one runs in the gateway and takes none");
  const names = listOf(value, path, at, `fields (${upstreamSendFields.join(", ")})`);
  names.forEach((n, j) => {
    if (typeof n !== "string" || !upstreamSendFields.includes(n as UpstreamSend)) at.fail([...path, j], `must be one of ${upstreamSendFields.join(", ")}`);
  });
  return [...new Set(names)] as UpstreamSend[];
}

/** `speaks`: the dialects an HTTP upstream serves (default chat), one of which must be chat or messages. */
function readSpeaks(value: unknown, path: Path, http: boolean, at: Locator): DialectName[] {
  if (value === undefined || value === null) return ["chat"];
  if (!http) at.fail(path, "describes an HTTP upstream (http(s)://host/v1#model); this model is answered in every dialect by translation — remove it");
  const names = listOf(value, path, at, `dialects (${dialectNames.join(", ")})`);
  if (names.length === 0) at.fail(path, `must name at least one of ${dialectNames.join(", ")}`);
  names.forEach((n, j) => {
    if (typeof n !== "string" || !dialectNames.includes(n as DialectName)) at.fail([...path, j], `must be one of ${dialectNames.join(", ")}`);
  });
  const speaks = [...new Set(names)] as DialectName[];
  if (!speaks.includes("chat") && !speaks.includes("messages")) at.fail(path, "must include chat or messages: reflected requests call the upstream in one of them");
  return speaks;
}

/** Refuses fallbacks that lead back to where they started (`a → b → a`), naming the cycle. */
function refuseFallbackCycles(models: readonly ConfiguredModel[], index: ReadonlyMap<string, number>, at: Locator): void {
  const done = new Set<string>();
  const visit = (name: string, trail: string[]): void => {
    if (done.has(name)) return;
    const start = trail.indexOf(name);
    if (start >= 0) {
      const cycle = [...trail.slice(start), name];
      const from = index.get(cycle[cycle.length - 2] as string) as number;
      const j = (models[from] as ConfiguredModel).fallbacks.indexOf(name);
      at.fail(["models", from, "fallbacks", j], `the fallbacks form a cycle (${cycle.join(" → ")}) — a fallback chain must end`);
    }
    for (const next of models[index.get(name) as number]?.fallbacks ?? []) visit(next, [...trail, name]);
    done.add(name);
  };
  for (const model of models) visit(model.name, []);
}

/** `policies`: a map of name → `{ reflect, allow_opt_out? }`, each `reflect` checked as a request's would be. */
function readPolicies(value: unknown, at: Locator, context: GatewayConfigContext & { modelNames: ReadonlySet<string> }): GatewayPolicy[] {
  if (value === undefined || value === null) return [];
  if (!isRecord(value)) at.fail(["policies"], "must be a map of policy name → { reflect, allow_opt_out? }");
  return Object.entries(value).map(([name, entry]) => {
    const path = ["policies", name];
    if (!TENANT_NAME.test(name)) at.fail(path, "a policy's name is 1–64 letters, digits or ._-, starting with a letter or digit", true);
    if (!isRecord(entry)) at.fail(path, "must be a map { reflect, allow_opt_out? }");
    refuseUnknown(entry, path, policyFields, at);
    if (!isRecord(entry.reflect)) at.fail([...path, "reflect"], "is required: the reflect object applied to a request that carries none ({} for the defaults)");
    checkPolicyReflect(entry.reflect, [...path, "reflect"], at, context);
    const optOut = entry.allow_opt_out ?? false;
    if (typeof optOut !== "boolean") at.fail([...path, "allow_opt_out"], "must be true or false");
    return { name, reflect: deepFreeze(entry.reflect), allowOptOut: optOut };
  });
}

/**
 * A policy's `reflect`, through the request's own reader (`parseReflect`) under the gateway's bounds, its field names
 * mapped onto the file's; then what a file may say that a request may not: `judge` names a configured model too, and
 * `memory.key` may hold the templates.
 */
function checkPolicyReflect(reflect: Record<string, unknown>, path: Path, at: Locator, context: GatewayConfigContext & { modelNames: ReadonlySet<string> }): void {
  const memory = reflect.memory;
  let filled = reflect;
  if (isRecord(memory) && typeof memory.key === "string") {
    const key = fillTemplates(memory.key);
    if (!MEMORY_KEY.test(key)) {
      at.fail([...path, "memory", "key"], `must be 1–128 letters, digits or ._:@/+- starting with a letter or digit, with the templates ${MEMORY_KEY_TEMPLATES.join(", ")} filled per request`);
    }
    filled = { ...reflect, memory: { ...memory, key } };
  }
  try {
    parseReflect(filled, context.bounds);
  } catch (error) {
    if (!(error instanceof RequestFieldError)) throw error;
    at.fail([...path.slice(0, -1), ...fieldParts(error.field)], error.detail);
  }
  const { judge, regex } = reflect;
  if (typeof judge === "string" && !context.modelNames.has(judge) && !context.judges.includes(judge)) {
    const offered = [...context.modelNames, ...context.judges];
    at.fail([...path, "judge"], `must name a configured model or a --judge the gateway is started with${offered.length === 0 ? " (there are none)" : ` (${offered.join(", ")})`}`);
  }
  const pattern = typeof regex === "string" ? regex : isRecord(regex) ? regex.pattern : undefined;
  if (typeof pattern === "string") {
    try {
      new RegExp(pattern, isRecord(regex) && typeof regex.flags === "string" ? regex.flags : "");
    } catch (error) {
      at.fail([...path, "regex"], `does not compile: ${(error as Error).message}`);
    }
  }
}

/** A memory key with each allowed template replaced by one character, so the literal rest is checked as `MEMORY_KEY` checks it. */
function fillTemplates(key: string): string {
  return MEMORY_KEY_TEMPLATES.reduce((text, template) => text.replaceAll(template, "x"), key);
}

/** A request field (`reflect.budget.tokens`, `reflect.tests[0]`) as path parts. */
function fieldParts(field: string): (string | number)[] {
  return field.split(".").flatMap((part) => {
    const match = /^([^[]*)((?:\[\d+\])*)$/u.exec(part);
    if (match === null) return [part];
    const indexes = [...(match[2] ?? "").matchAll(/\[(\d+)\]/gu)].map((m) => Number(m[1]));
    return [...(match[1] === "" ? [] : [match[1] as string]), ...indexes];
  });
}

/** `attachments`: each a policy and at least one of tenant, model, route, all known; no selector attached twice. */
function readAttachments(value: unknown, at: Locator, known: { tenants: ReadonlySet<string>; modelNames: ReadonlySet<string>; policyNames: ReadonlySet<string> }): PolicyAttachment[] {
  const seen = new Map<string, number>();
  return listOf(value, ["attachments"], at, "attachments ({ policy, tenant?, model?, route? })").map((entry, i) => {
    const path = ["attachments", i];
    if (!isRecord(entry)) at.fail(path, "must be a map { policy, tenant?, model?, route? }");
    refuseUnknown(entry, path, attachmentFields, at);
    const policy = optionalName(entry.policy, [...path, "policy"], TENANT_NAME, at);
    if (policy === undefined) at.fail([...path, "policy"], "is required: the name of a policy under policies");
    if (!known.policyNames.has(policy)) at.fail([...path, "policy"], `names no policy — ${listed("policies", known.policyNames)}`);
    const tenant = optionalName(entry.tenant, [...path, "tenant"], TENANT_NAME, at);
    if (tenant !== undefined && !known.tenants.has(tenant)) at.fail([...path, "tenant"], `names no tenant of this gateway's keys — the tenants are ${[...known.tenants].join(", ")} (REFLECT_GATEWAY_KEY=NAME:KEY,… or --keys)`);
    const model = optionalName(entry.model, [...path, "model"], MODEL_NAME, at);
    if (model !== undefined && !known.modelNames.has(model)) at.fail([...path, "model"], `names no configured model — ${listed("models", known.modelNames)}`);
    const route = optionalName(entry.route, [...path, "route"], ROUTE_NAME, at);
    if (tenant === undefined && model === undefined && route === undefined) at.fail(path, "names no tenant, model or route — attach the policy to one, or make it default_policy for every request");
    const selector = JSON.stringify([tenant ?? null, model ?? null, route ?? null]);
    const earlier = seen.get(selector);
    if (earlier !== undefined) at.fail(path, `selects the same requests as attachments[${earlier}] — one policy applies to a tenant, model and route`);
    seen.set(selector, i);
    return { policy, ...(tenant === undefined ? {} : { tenant }), ...(model === undefined ? {} : { model }), ...(route === undefined ? {} : { route }) };
  });
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
