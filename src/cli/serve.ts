import path from "node:path";
import type { Command } from "commander";
import { UsageError } from "../errors.js";
import { RequestMemory } from "../loops/request-memory.js";
import { openRequestLessonStore } from "../memory/open-request-lessons.js";
import { defaultRequestLessonPolicy, defaultRequestLessonQuotas } from "../memory/request-lesson-store.js";
import { openRecordWriter, type RecordWriter } from "../record/record-writer.js";
import type { LanguageModel } from "../models/language-model.js";
import { createHttpModel } from "../models/http.js";
import { credentialVariables, openModel, type OpenModelOptions } from "../models/open.js";
import { isRemoteSpec, parseModelSpec } from "../models/spec.js";
import { engineArms, vllmArms, type AdapterEngine, type GatewayArms } from "../serve/arms.js";
import { dialectNames, type DialectName } from "../serve/dialects/index.js";
import { hostName, isLoopbackHost } from "../serve/host-guard.js";
import { createGatewayMetrics } from "../serve/metrics.js";
import { defaultGatewayLimits, startGateway, type GatewayLimits, type RunningGateway } from "../serve/server.js";
import { createOtelTracer, otlpEndpointFromEnv } from "../telemetry/otel.js";
import type { Tracer } from "../telemetry/tracer.js";
import { reflectkitVersion } from "../version.js";
import { int } from "./parse.js";
import { fetchProgressBar } from "./progress.js";
import { stopSignal } from "./stop-signal.js";
import { LOCAL_TENANT } from "../core/tenant.js";
import { parseGatewayKeys, readKeysFile } from "../serve/tenants.js";
import { readGatewayConfig } from "../serve/gateway-config.js";
import { upstreamSendFields, type ConfiguredModel, type GatewayConfig, type UpstreamSend } from "../serve/gateway-config-types.js";
import type { GatewayModel } from "../serve/gateway-options.js";

interface ServeFlags {
  /** Required, unless `--config` configures models (one stands in for it; several are served by `model`). */
  upstream?: string;
  config?: string;
  port: number;
  host: string;
  allowNoKey: boolean;
  allowedHost: string[];
  record?: string;
  recordContent: boolean;
  judge: string[];
  upstreamKeyEnv?: string;
  upstreamApi: DialectName[];
  upstreamSend?: UpstreamSend[];
  parallel?: number;
  maxQueue: number;
  timeoutMs: number;
  otelJsonl?: string;
  offline: boolean;
  lora?: string;
  canary?: number;
  memory?: string;
  store?: string;
  lessonsPerKey: number;
  lessonTtlDays: number;
  keys?: string;
  tenantLessons: number;
  tenantLessonMib: number;
  storeLessons: number;
  storeLessonMib: number;
}

/** `--canary`: a percent from 0 to 100. */
function percent(value: string): number {
  const n = Number(value);
  if (value.trim() === "" || !Number.isFinite(n) || n < 0 || n > 100) throw new UsageError(`--canary ${value}: give the percent of requests for the adapter arm, from 0 to 100`);
  return n;
}

/** `--upstream-api`: a comma-separated list of dialect names. */
function parseApis(value: string): DialectName[] {
  const names = value.split(",").map((n) => n.trim()).filter((n) => n !== "");
  const unknown = names.filter((n) => !dialectNames.includes(n as DialectName));
  if (names.length === 0 || unknown.length > 0) throw new UsageError(`--upstream-api ${JSON.stringify(value)}: use one or more of ${dialectNames.join(", ")}, comma-separated`);
  return [...new Set(names)] as DialectName[];
}

/** `--upstream-send`: a comma-separated list of request fields the upstream takes. */
function parseSend(value: string): UpstreamSend[] {
  const names = value.split(",").map((n) => n.trim()).filter((n) => n !== "");
  const unknown = names.filter((n) => !upstreamSendFields.includes(n as UpstreamSend));
  if (names.length === 0 || unknown.length > 0) throw new UsageError(`--upstream-send ${JSON.stringify(value)}: use one or more of ${upstreamSendFields.join(", ")}, comma-separated`);
  return [...new Set(names)] as UpstreamSend[];
}

/** How long a stopping gateway waits for requests in flight before it cuts them. */
const STOP_GRACE_MS = 15_000;

export function registerServe(program: Command): void {
  program
    .command("serve")
    .description("an OpenAI-compatible gateway: requests with a `reflect` object run the cascade (verify, reflect, retry); the rest pass through unchanged")
    .option("--upstream <spec>", "required unless --config configures models (several are picked by a request's model; --upstream beside them is refused): the model behind the gateway — a registered name, a .gguf path, or http(s)://host/v1#model")
    .option("--config <file>", "the gateway's config file (YAML or JSON): models, named reflect policies and the tenants, models and routes they apply to; checked whole before any model is opened")
    .option("--port <n>", "port to listen on (0: any free port)", int(0), 8787)
    .option("--host <host>", "address to bind; anything but loopback exposes the gateway and needs REFLECT_GATEWAY_KEY (or --allow-no-key)", "127.0.0.1")
    .option("--keys <file>", "the client keys, one NAME:KEY a line (# comments): each name is a tenant whose lessons, episodes and quotas are its own; instead of, or beside, REFLECT_GATEWAY_KEY=NAME:KEY,…")
    .option("--allow-no-key", "start on a non-loopback --host without REFLECT_GATEWAY_KEY: anyone who can reach the gateway can use the upstream", false)
    .option("--allowed-host <name>", "a name clients reach a keyless gateway by, besides its address and localhost (repeatable); requests naming another Host or Origin are refused (403)", (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option("--record <dir>", "append every reflected request's episode to this record folder (synced before the response)")
    .option("--record-content", "keep request and reply text in the record (without it: counts and verdicts only)", false)
    .option("--judge <spec>", "a model a request may name in reflect.judge (repeatable); requests cannot name any other", (value: string, previous: string[]) => [...previous, value], [] as string[])
    .option("--upstream-key-env <name>", "environment variable holding the upstream's API key (HTTP upstreams; default OPENAI_API_KEY, or ANTHROPIC_API_KEY for --upstream-api messages)")
    .option("--upstream-api <list>", "what an HTTP upstream serves, comma-separated: chat (Chat Completions), responses, messages (Anthropic); a request in one of these is relayed raw, one in another is translated", parseApis, ["chat"] as DialectName[])
    .option("--upstream-send <list>", "request fields a translated call sends the upstream, comma-separated: reasoning (the client's reasoning effort as reasoning_effort or a thinking budget), user (its end-user id); default none, since many OpenAI-compatible servers refuse fields they do not know", parseSend)
    .option("--parallel <n>", "requests running the model at once (embedded default 1, HTTP default 4)", int(1))
    .option("--max-queue <n>", "requests waiting beyond --parallel; more are answered 429", int(0), defaultGatewayLimits.maxQueue)
    .option("--timeout-ms <n>", "wall-clock limit of one request, upstream calls included (504 beyond)", int(1), defaultGatewayLimits.requestTimeoutMs)
    .option("--otel-jsonl <file>", "append the gateway's spans to this JSON-lines file (OTLP too when OTEL_EXPORTER_OTLP_ENDPOINT is set)")
    .option("--lora <path>", "serve this adapter as the adapter arm: a GGUF LoRA for an embedded upstream, or a PEFT folder (on the upstream's machine) for a vLLM upstream, loaded with /v1/load_lora_adapter; replace it later with POST /admin/lora (REFLECT_ADMIN_KEY)")
    .option("--canary <percent>", "percent of requests (0–100), reflected and pass-through, run on the adapter arm, by a stable hash of reflect.arm_key, the x-reflect-arm-key header, or the body (default 100 with --lora; without --lora the arm waits for POST /admin/lora)", percent)
    .option("--offline", "never fetch a model; fail if it is not cached", false)
    .option("--memory <file>", "keep request lessons (reflect.memory) in this SQLite file: reflections of failed drafts, shown to later requests with the same key")
    .option("--store <url>", "keep request lessons in PostgreSQL (postgres://user:password@host:port/db), shared by every gateway started with it")
    .option("--lessons-per-key <n>", "request lessons kept per memory key (the ones recorded longest ago go first)", int(1), defaultRequestLessonPolicy.maxPerKey)
    .option("--lesson-ttl-days <n>", "days a request lesson lives after it was last recorded", int(1), defaultRequestLessonPolicy.ttlMs / 86_400_000)
    .option("--tenant-lessons <n>", "request lessons one tenant keeps over all its keys; a new one past it is refused and counted", int(1), defaultRequestLessonQuotas.tenantLessons)
    .option("--tenant-lesson-mib <n>", "MiB of lesson text and questions one tenant keeps", int(1), defaultRequestLessonQuotas.tenantBytes / 2 ** 20)
    .option("--store-lessons <n>", "request lessons the whole store keeps, every tenant's together", int(1), defaultRequestLessonQuotas.storeLessons)
    .option("--store-lesson-mib <n>", "MiB of lesson text and questions the whole store keeps", int(1), defaultRequestLessonQuotas.storeBytes / 2 ** 20)
    .action(async (flags: ServeFlags, command: Command) => {
      await serve(flags, (option) => command.getOptionValueSource(option) === "cli");
    });
}

/** What `reflect serve` serves: the flags (the default model's standing in for `--upstream`), the config, its models. */
interface Served {
  flags: ServeFlags & { upstream: string };
  config?: GatewayConfig;
  /** With a config of several models: all of them, the default (`default_model`, else the first) among them. */
  several?: { models: readonly ConfiguredModel[]; defaultName: string };
}

/**
 * The config file, read and checked against the gateway's caps, tenants and judges; and the flags its default model
 * stands in for. One model serves as `--upstream` would; several are each opened and picked by a request's `model`.
 */
function configured(given: ServeFlags, tenants: readonly string[], explicit: (option: string) => boolean): Served {
  const config = given.config === undefined ? undefined : readGatewayConfig(path.resolve(given.config), configContext(given, tenants));
  const count = config?.models.length ?? 0;
  if (given.upstream !== undefined && count > 1) throw new UsageError(`--upstream and the ${count} models of ${given.config} both name the upstream — with several models, declare every one in the file (models:, and default_model for a request that names none)`);
  if (given.upstream !== undefined) return { flags: { ...given, upstream: given.upstream }, ...(config === undefined ? {} : { config }) };
  if (config === undefined || count === 0) throw new UsageError("--upstream is required: the model behind the gateway (or a --config that configures models)");
  const flagNames: Record<string, string> = { upstreamApi: "upstream-api", upstreamKeyEnv: "upstream-key-env", upstreamSend: "upstream-send" };
  for (const option of Object.keys(flagNames)) {
    if (explicit(option)) throw new UsageError(`--${flagNames[option]} and the model${count > 1 ? "s" : ""} of ${given.config} both describe the upstream — say it in one place (speaks, key_env and send in the file)`);
  }
  const defaultName = config.defaultModel ?? (config.models[0] as ConfiguredModel).name;
  const chosen = config.models.find((m) => m.name === defaultName) as ConfiguredModel;
  const flags = { ...given, upstream: chosen.spec, upstreamApi: chosen.speaks, ...(chosen.keyEnv === undefined ? {} : { upstreamKeyEnv: chosen.keyEnv }), ...(chosen.send === undefined ? {} : { upstreamSend: chosen.send }) };
  return { flags, config, ...(count > 1 ? { several: { models: config.models, defaultName } } : {}) };
}

/** How a configured model is opened: the API its loop calls speak, its key variable, its `openModel` options. */
function modelOpening(model: Pick<ConfiguredModel, "spec" | "speaks" | "keyEnv">, flags: ServeFlags): { api: "chat" | "messages"; keyEnv: string; parallel: number; options: OpenModelOptions } {
  // The loop's calls (reflected requests, and translated ones) go out in Chat Completions where the upstream serves it.
  const api = model.speaks.includes("chat") ? "chat" : model.speaks.includes("messages") ? "messages" : undefined;
  if (api === undefined) throw new UsageError("--upstream-api must include chat or messages: reflected requests call the upstream in one of them");
  const keyEnv = model.keyEnv ?? (api === "messages" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY");
  const parallel = flags.parallel ?? (isRemoteSpec(parseModelSpec(model.spec)) ? 4 : 1);
  return { api, keyEnv, parallel, options: { parallel, offline: flags.offline, progress: fetchProgressBar(), apiKeyEnv: keyEnv, ...(api === "messages" ? { api } : {}) } };
}

/**
 * Every model of a config of several, as the gateway serves them: the default one on `upstream` (already opened, its
 * arms around it), each other opened here and pushed onto `opened` (closed at stop); each HTTP one with its endpoint.
 */
async function openSeveral(several: NonNullable<Served["several"]>, flags: ServeFlags, upstream: LanguageModel, opened: LanguageModel[]): Promise<{ models: GatewayModel[]; secretEnv: string[] }> {
  const models: GatewayModel[] = [];
  const secretEnv: string[] = [];
  for (const configuredModel of several.models) {
    const { api, keyEnv, options } = modelOpening(configuredModel, flags);
    secretEnv.push(...credentialVariables(configuredModel.spec, { apiKeyEnv: keyEnv, api }));
    let model = upstream;
    if (configuredModel.name !== several.defaultName) {
      model = await openModel(configuredModel.spec, options);
      opened.push(model);
    }
    const spec = parseModelSpec(configuredModel.spec);
    const upstreamHttp = spec.kind === "http" ? { upstreamHttp: { baseUrl: spec.baseUrl, model: spec.model, apiKeyEnv: keyEnv, speaks: configuredModel.speaks } } : {};
    models.push({ name: configuredModel.name, upstream: model, ...upstreamHttp, fallbacks: configuredModel.fallbacks, ...(configuredModel.send === undefined ? {} : { send: configuredModel.send }) });
  }
  return { models, secretEnv };
}

/** What the config file is checked against: the gateway's caps, its tenants and its judges. */
function configContext(flags: ServeFlags, tenants: readonly string[]): Parameters<typeof readGatewayConfig>[1] {
  return { bounds: { maxTurns: defaultGatewayLimits.maxTurns, budget: defaultGatewayLimits.budget }, tenants, judges: flags.judge };
}

/**
 * The config file read again (`POST /admin/config`, SIGHUP): checked whole as at start; its models may not change, as
 * the upstreams were opened at start.
 */
function configReloader(file: string, flags: ServeFlags, tenants: readonly string[], started: GatewayConfig): () => GatewayConfig {
  return () => {
    const next = readGatewayConfig(path.resolve(file), configContext(flags, tenants));
    if (JSON.stringify([next.models, next.defaultModel]) !== JSON.stringify([started.models, started.defaultModel])) {
      throw new UsageError(`${file}: its models changed — models are opened at start, so a reload changes policies and attachments only; restart the gateway for new models`);
    }
    return next;
  };
}

/** SIGHUP reloads the config (as `POST /admin/config`); a config that does not check leaves the old one, saying why. */
function reloadOnHangup(gateway: RunningGateway, load: () => GatewayConfig): () => void {
  const reload = (): void => {
    try {
      const next = load();
      gateway.reloadConfig(next);
      process.stderr.write(`reflect serve: reloaded ${next.source} (${next.policies.length} policies)\n`);
    } catch (error) {
      process.stderr.write(`reflect serve: the config was not reloaded, the old one stays: ${(error as Error).message}\n`);
    }
  };
  process.on("SIGHUP", reload);
  return () => process.off("SIGHUP", reload);
}

/** Opens the models, the record and the tracer, serves until SIGINT or SIGTERM, then closes everything in order. */
async function serve(given: ServeFlags, explicit: (option: string) => boolean): Promise<void> {
  // Each client key is a tenant (`NAME:KEY`, comma-separated, and the keys file's lines), with its own lessons,
  // episodes, quotas and share of the gateway.
  const tenants = [...parseGatewayKeys(process.env.REFLECT_GATEWAY_KEY ?? ""), ...(given.keys === undefined ? [] : readKeysFile(path.resolve(given.keys)))];
  const apiKeys = tenants.map((t) => t.key);
  if (new Set(apiKeys).size !== apiKeys.length) throw new UsageError("a client key is given twice, in REFLECT_GATEWAY_KEY and --keys — a key is one tenant's");
  const keyless = apiKeys.length === 0;
  // The config file is read and checked whole before anything else is opened.
  const tenantNamesGiven = keyless ? [LOCAL_TENANT] : [...new Set(tenants.map((t) => t.tenant))];
  const { flags, config, several } = configured(given, tenantNamesGiven, explicit);
  const loadConfig = config === undefined || flags.config === undefined ? undefined : configReloader(flags.config, flags, tenantNamesGiven, config);
  checkExposure(flags, keyless);
  // The admin route's key and the metrics route's, never a client's: one that is both is refused before any model is opened.
  const adminKey = process.env.REFLECT_ADMIN_KEY?.trim();
  if (adminKey !== undefined && adminKey !== "" && apiKeys.includes(adminKey)) throw new UsageError("REFLECT_ADMIN_KEY is one of the client keys — give the admin key a value of its own, so no client can load adapters");
  const metricsKey = process.env.REFLECT_METRICS_KEY?.trim();
  if (metricsKey !== undefined && metricsKey !== "" && apiKeys.includes(metricsKey)) throw new UsageError("REFLECT_METRICS_KEY is one of the client keys — give the metrics key a value of its own, so no tenant reads the others' traffic");
  const spec = parseModelSpec(flags.upstream);
  if (spec.kind !== "http" && flags.upstreamApi.join(",") !== "chat") throw new UsageError(`--upstream-api describes an HTTP upstream (http(s)://host/v1#model); ${flags.upstream} is answered in every dialect by translation`);
  const { api, keyEnv: upstreamKeyEnv, parallel, options: upstreamOptions } = modelOpening({ spec: flags.upstream, speaks: flags.upstreamApi, ...(flags.upstreamKeyEnv === undefined ? {} : { keyEnv: flags.upstreamKeyEnv }) }, flags);
  const { api: _api, ...openOptions } = upstreamOptions;
  const models: LanguageModel[] = [];
  let recorder: RecordWriter | undefined;
  let tracer: Tracer | undefined;
  let memory: RequestMemory | undefined;
  try {
    if (flags.memory !== undefined && flags.store !== undefined) throw new UsageError("--memory FILE and --store URL both name a lesson store — pass one");
    const lessonStore = flags.store ?? flags.memory;
    if (flags.store !== undefined && !/^postgres(?:ql)?:\/\//iu.test(flags.store)) throw new UsageError("--store takes a postgres:// URL; for a SQLite file pass --memory FILE");
    const quotas = { tenantLessons: flags.tenantLessons, tenantBytes: flags.tenantLessonMib * 2 ** 20, storeLessons: flags.storeLessons, storeBytes: flags.storeLessonMib * 2 ** 20 };
    if (lessonStore !== undefined) {
      const store = await openRequestLessonStore(flags.memory === undefined ? lessonStore : path.resolve(lessonStore), { maxPerKey: flags.lessonsPerKey, ttlMs: flags.lessonTtlDays * 86_400_000, quotas });
      memory = new RequestMemory({ store, onError: (error, during) => process.stderr.write(`reflect serve: the lesson store (${store.location}) failed to ${during} (${(error as Error)?.message ?? String(error)}); the request went on without it\n`) });
    }
    const engine = await openModel(flags.upstream, upstreamOptions);
    models.push(engine);
    const arms = await openArms(flags, engine, spec, { apiKeyEnv: upstreamKeyEnv, parallel, api });
    // With arms, everything but the adapter arm's attempts runs on the base arm: on an embedded engine that takes
    // turns, a call straight to the engine would run under whichever adapter it holds.
    const upstream = arms?.model("base") ?? engine;
    const judges = new Map<string, LanguageModel>();
    for (const judgeSpec of flags.judge) {
      // A judge on the upstream's own spec shares its model (one copy of an embedded model in memory).
      const judge = judgeSpec === flags.upstream ? upstream : await openModel(judgeSpec, { ...openOptions, parallel: 1 });
      if (judge !== upstream) models.push(judge);
      judges.set(judgeSpec, judge);
    }
    // The file's one model, standing in for --upstream, judges by its configured name too (several are offered by the gateway).
    const standIn = several === undefined && given.upstream === undefined ? config?.models[0] : undefined;
    if (standIn !== undefined && config?.policies.some((p) => p.reflect.judge === standIn.name) === true && !judges.has(standIn.name)) judges.set(standIn.name, upstream);
    const served = several === undefined ? undefined : await openSeveral(several, flags, upstream, models);
    const limits: Partial<GatewayLimits> = { parallel, maxQueue: flags.maxQueue, requestTimeoutMs: flags.timeoutMs };
    if (flags.record !== undefined) {
      recorder = await openRecordWriter({
        dir: path.resolve(flags.record),
        recordContent: flags.recordContent,
        secretEnv: [...new Set([...[flags.upstream, ...flags.judge].flatMap((s) => credentialVariables(s, { apiKeyEnv: upstreamKeyEnv, ...(s === flags.upstream ? { api } : {}) })), ...(config?.models ?? []).flatMap((m) => (m.keyEnv === undefined ? [] : [m.keyEnv])), ...(served?.secretEnv ?? [])])],
        config: { kind: "gateway", upstream: flags.upstream, ...(flags.config === undefined ? {} : { config: path.resolve(flags.config) }), ...(several === undefined ? {} : { models: several.models.map(({ name, spec, speaks }) => ({ name, spec, speaks })), defaultModel: several.defaultName }), upstreamApi: flags.upstreamApi, model: upstream.modelId, judges: flags.judge, ...(arms === undefined ? {} : { arms: { canary_percent: arms.canaryPercent, lora: flags.lora ?? null } }), limits: { ...defaultGatewayLimits, ...limits }, ...(memory === undefined ? {} : { lessons: { store: memory.store.kind, location: memory.store.location, perKey: flags.lessonsPerKey, ttlDays: flags.lessonTtlDays, quotas } }), reflectkit: reflectkitVersion },
      });
    }
    const otlpEndpoint = otlpEndpointFromEnv(process.env);
    if (flags.otelJsonl !== undefined || otlpEndpoint !== undefined) {
      tracer = createOtelTracer({ ...(flags.otelJsonl === undefined ? {} : { jsonlPath: path.resolve(flags.otelJsonl) }), ...(otlpEndpoint === undefined ? {} : { otlpEndpoint }), serviceName: "reflectkit-gateway" });
    }
    let gateway: RunningGateway | undefined;
    const lessons = memory;
    const metrics = createGatewayMetrics({ tenants: keyless ? [LOCAL_TENANT] : tenants.map((t) => t.tenant), tenantInFlight: () => gateway?.load().tenants ?? {}, inFlight: () => gateway?.load().inFlight ?? 0, queued: () => gateway?.load().queued ?? 0, checks: () => gateway?.load().checks ?? { queued: 0, busy: 0, replaced: 0 }, ...(lessons === undefined ? {} : { lessons: () => lessons.stats }), ...(config === undefined ? {} : { policies: () => (gateway?.config() ?? config).policies.map((p) => p.name) }) });
    gateway = await startGateway({
      upstream,
      ...(spec.kind === "http" ? { upstreamHttp: { baseUrl: spec.baseUrl, model: spec.model, apiKeyEnv: upstreamKeyEnv, speaks: flags.upstreamApi } } : {}),
      ...(flags.upstreamSend === undefined ? {} : { upstreamSend: flags.upstreamSend }),
      ...(served === undefined || several === undefined ? {} : { models: served.models, defaultModel: several.defaultName }),
      judges,
      ...(config === undefined ? {} : { config }),
      ...(loadConfig === undefined ? {} : { loadConfig }),
      ...(arms === undefined ? {} : { arms }),
      ...(adminKey === undefined || adminKey === "" ? {} : { adminKey }),
      ...(metricsKey === undefined || metricsKey === "" ? {} : { metricsKey }),
      observer: metrics,
      metricsText: () => metrics.text(),
      ...(recorder === undefined ? {} : { recorder }),
      ...(memory === undefined ? {} : { memory }),
      ...(tracer === undefined ? {} : { tracer }),
      ...(keyless ? {} : { tenants }),
      allowedHosts: flags.allowedHost,
      limits,
      host: flags.host,
      port: flags.port,
    });
    if (keyless && !isLoopbackHost(flags.host)) process.stderr.write(`reflect serve: listening on ${flags.host} with no REFLECT_GATEWAY_KEY — anyone who can reach it can use the upstream\n`);
    const adapterModel = arms?.model("adapter")?.modelId;
    const armsText = arms === undefined ? "" : `, adapter arm ${adapterModel ?? "(none loaded yet)"} on ${arms.canaryPercent}% of requests`;
    const tenantNames = [...new Set(tenants.map((t) => t.tenant))];
    if (tenantNames.some((t) => t.startsWith("key-"))) process.stderr.write("reflect serve: some client keys have no name, so their tenants are named after the keys' digests (key-…) — name them (REFLECT_GATEWAY_KEY=NAME:KEY,… or --keys FILE) to find them in records and metrics\n");
    const tenantsText = tenantNames.length <= 1 ? "" : `, ${tenantNames.length} tenants (${tenantNames.slice(0, 8).join(", ")}${tenantNames.length > 8 ? ", …" : ""})`;
    const modelsText = several === undefined ? upstream.modelId : `models ${several.models.map((m) => (m.name === several.defaultName ? `${m.name} (default)` : m.name)).join(", ")}`;
    process.stdout.write(`reflect serve: ${gateway.url}/v1 → ${modelsText}${tenantsText}${armsText}${recorder === undefined ? "" : `, recording to ${recorder.dir}`}${memory === undefined ? "" : `, lessons in ${memory.store.location}`}\n`);
    const stopReloading = loadConfig === undefined ? undefined : reloadOnHangup(gateway, loadConfig);
    await stopSignal();
    stopReloading?.();
    process.stdout.write("reflect serve: stopping (waiting for requests in flight)\n");
    await gateway.close(STOP_GRACE_MS);
  } finally {
    // Lessons still being recorded are written before the store closes.
    await memory?.close();
    await recorder?.close();
    await tracer?.shutdown();
    for (const model of models) await model.close();
  }
}

/**
 * The arms of `--lora` / `--canary`: an embedded upstream takes turns between base and adapter (`engineArms`), a
 * Chat Completions upstream loads the adapter through its runtime LoRA API (`vllmArms`). The adapter of `--lora` is
 * loaded now, so a file that does not fit the base stops the start.
 */
async function openArms(flags: ServeFlags, upstream: LanguageModel, spec: ReturnType<typeof parseModelSpec>, http: { apiKeyEnv: string; parallel: number; api: string }): Promise<GatewayArms | undefined> {
  if (flags.lora === undefined && flags.canary === undefined) return undefined;
  const canaryPercent = flags.canary ?? 100;
  let arms: GatewayArms;
  if (spec.kind === "http") {
    if (http.api !== "chat") throw new UsageError("--lora/--canary on an HTTP upstream load the adapter with vLLM's /v1/load_lora_adapter: the upstream must serve Chat Completions (--upstream-api chat)");
    arms = vllmArms(upstream, { baseUrl: spec.baseUrl, apiKeyEnv: http.apiKeyEnv, prefix: "reflect-adapter", modelFor: (name) => createHttpModel({ baseUrl: spec.baseUrl, model: name, apiKeyEnv: http.apiKeyEnv, concurrency: http.parallel }) }, { canaryPercent });
  } else if (typeof (upstream as Partial<AdapterEngine>).setLora === "function") {
    arms = engineArms(upstream as unknown as AdapterEngine, { canaryPercent });
  } else {
    throw new UsageError(`--lora/--canary need an upstream that can apply an adapter: an embedded GGUF model or a vLLM endpoint (http(s)://host/v1#model); ${flags.upstream} is not one`);
  }
  if (flags.lora !== undefined) await arms.load({ path: spec.kind === "http" ? flags.lora : path.resolve(flags.lora) });
  return arms;
}

/**
 * Refuses, before any model is opened, a keyless gateway on an address others can reach (it would spend the
 * upstream for anyone) unless `--allow-no-key` says so, and an `--allowed-host` that is not a host name.
 */
function checkExposure(flags: ServeFlags, keyless: boolean): void {
  if (keyless && !isLoopbackHost(flags.host) && !flags.allowNoKey) {
    throw new UsageError(`--host ${flags.host} exposes the gateway, and REFLECT_GATEWAY_KEY is not set — set it (clients then send it as their API key), bind loopback (--host 127.0.0.1), or pass --allow-no-key to let anyone who can reach ${flags.host} use the upstream`);
  }
  for (const name of flags.allowedHost) {
    if (hostName(name) === undefined) throw new UsageError(`--allowed-host ${name} is not a host name — give the name alone, e.g. --allowed-host gateway.internal (no scheme, no path)`);
  }
}

