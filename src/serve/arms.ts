/**
 * The gateway's two arms: `base` (the upstream as started) and `adapter` (the same base with a LoRA adapter), a
 * canary share of requests sent to the adapter by a stable hash, and the adapter loaded or replaced while serving.
 *
 * One embedded engine serves both arms by taking turns (`engineArms`): llama.cpp applies an adapter to the whole
 * context, every sequence at once (`EmbeddedModel.setLora`), so two arms cannot run on it at the same moment. Calls of
 * the arm the engine holds go on in parallel; a call of the other arm waits for them to finish, the adapter is switched
 * (each sequence's KV cache cleared), and every call of that arm then waiting runs; calls arriving meanwhile queue
 * behind, so neither arm starves.
 * The cost, paid only under mixed traffic: each switch waits for the calls in flight to drain, re-applies the adapter
 * and loses the prefix cache. A second context on the same weights would avoid the waits at the price of a second KV
 * cache; with the embedded default of one sequence there is nothing in parallel to lose, so the engine takes turns.
 * An HTTP upstream that loads adapters at run time (vLLM's `/v1/load_lora_adapter`) serves both arms at once: the
 * adapter arm names the adapter as its `model` (`vllmArms`).
 *
 * An episode on the adapter arm pins the adapter it started on (`pin`): every call it makes — drafts, reflections,
 * retries — goes to that adapter, so an answer is never half one adapter's and half the next's, nor sent to one already
 * unloaded. On the engine a replacement waits for the episodes pinned to the old adapter to end, and episodes arriving
 * meanwhile wait for the new one: the engine holds one adapter at a time, so keeping the old one for its episodes
 * while the new one serves would switch adapters between calls of one arm, at a drained engine and a lost prefix
 * cache each time; the wait is bounded by the request timeout. On vLLM both stay served: new episodes go to the new
 * adapter at once, and the old one is unloaded after its last episode ends.
 */
import { createHash } from "node:crypto";
import { ModelCallError, UsageError } from "../errors.js";
import type { EmbeddedModel } from "../models/embedded.js";
import type { GenerateRequest, GenerateResult, LanguageModel } from "../models/language-model.js";
import type { LoraAdapter } from "../models/lora.js";

export const armNames = ["base", "adapter"] as const;
export type ArmName = (typeof armNames)[number];

/** What `POST /admin/lora` asks: an adapter file (embedded: a GGUF LoRA) or folder (vLLM: a PEFT folder). */
export interface AdapterSpec {
  path: string;
  /** The adapter's scale (embedded only; default 1). */
  scale?: number;
}

/** The gateway's arms: the model each runs on, and how the adapter is loaded or replaced. */
export interface GatewayArms {
  /** Percent of requests (0–100) sent to the adapter arm, by `armOf`. */
  canaryPercent: number;
  /** The model of an arm; the adapter arm's is undefined until an adapter is loaded. */
  model(arm: ArmName): LanguageModel | undefined;
  /** Loads or replaces the adapter without a restart; resolves with the adapter arm's model id, and a note for the admin. */
  load(spec: AdapterSpec): Promise<{ model: string; note?: string }>;
  /**
   * The name an HTTP upstream serves the adapter under now; undefined on an engine, and until an adapter is loaded. A
   * relayed pass-through takes it from its lease (`pin`), so a replacement cannot unload it under the relay.
   */
  servedAdapter?(): string | undefined;
  /**
   * Pins an arm for one episode (or one relayed request): every call through the lease's model goes to the adapter
   * the lease began on, and that adapter is not replaced (engine) or unloaded (vLLM) until the lease is released.
   * May wait for a replacement under way (engine). Undefined for an arm with no model (no adapter loaded).
   */
  pin(arm: ArmName, signal?: AbortSignal): Promise<ArmLease | undefined>;
}

/** One episode's hold on an arm (`GatewayArms.pin`). */
export interface ArmLease {
  /** The arm's model as the lease began: the same adapter on every call. */
  model: LanguageModel;
  /** The name an HTTP upstream serves that adapter under (vLLM), for a relayed request; undefined on an engine and on the base. */
  served?: string;
  /** Ends the hold; a second call does nothing. */
  release(): void;
}

/** A lease whose `release` runs `end` once. */
function lease(model: LanguageModel, end: () => void, served?: string): ArmLease {
  let held = true;
  return {
    model,
    ...(served === undefined ? {} : { served }),
    release() {
      if (!held) return;
      held = false;
      end();
    },
  };
}

/**
 * The arm of a request with this key: the adapter when the key's bucket (the first 32 bits of its SHA-256, modulo
 * 10 000, in hundredths of a percent) is below `percent`. The same key always lands in the same arm, and raising the
 * percent only moves keys from base to adapter.
 */
export function armOf(key: string, percent: number): ArmName {
  if (!(percent >= 0 && percent <= 100)) throw new UsageError(`the canary share must be a percent from 0 to 100, not ${percent}`);
  const bucket = createHash("sha256").update(key, "utf8").digest().readUInt32BE(0) % 10_000;
  return bucket < percent * 100 ? "adapter" : "base";
}

/** The part of an embedded model the arms need: generation and the adapter switch. */
export type AdapterEngine = Pick<EmbeddedModel, "doGenerate" | "setLora" | "lora" | "modelId" | "maxConcurrency"> & Partial<Pick<LanguageModel, "countTokens" | "close">>;

/** Calls waiting for their arm's turn, and adapter loads waiting for the engine to be idle, in arrival order. */
type Waiter = { kind: "call"; arm: ArmName; admit: () => void; fail: (error: unknown) => void } | { kind: "load"; adapter: LoraAdapter; done: () => void; fail: (error: unknown) => void };

/**
 * The engine's turns between the arms (see the file's comment): the calls of the arm whose weights it holds go in; a
 * switch of arm, or of adapter, waits for the calls in flight to end, and then takes every waiting call of its arm.
 */
class EngineTurns {
  /** The adapter the adapter arm runs (undefined: none loaded). */
  adapter: LoraAdapter | undefined;
  /** Switches of the engine's weights made so far. */
  switches = 0;
  /** The arm whose weights the engine holds; undefined after a failed switch (the next turn switches). */
  private holding: ArmName | undefined;
  private running = 0;
  private switching = false;
  private readonly waiting: Waiter[] = [];

  constructor(
    private readonly engine: AdapterEngine,
    initial: LoraAdapter | undefined,
  ) {
    this.adapter = initial;
    this.holding = engine.lora === undefined ? "base" : "adapter";
  }

  /** Waits for `arm`'s turn (rejects with the signal's reason if it aborts first); `leave` once the call ends. */
  enter(arm: ArmName, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    if (!this.switching && this.waiting.length === 0 && arm === this.holding) {
      this.running += 1;
      return Promise.resolve();
    }
    return new Promise<void>((resolve, reject) => {
      const entry: Waiter = { kind: "call", arm, admit: resolve, fail: reject };
      this.waiting.push(entry);
      signal?.addEventListener(
        "abort",
        () => {
          const at = this.waiting.indexOf(entry);
          if (at < 0) return;
          this.waiting.splice(at, 1);
          reject(signal.reason);
          void this.pump();
        },
        { once: true },
      );
      void this.pump();
    });
  }

  leave(): void {
    this.running -= 1;
    void this.pump();
  }

  /** Applies `adapter` in the engine's turn (checked against the base there, so a bad file is refused to the caller). */
  load(adapter: LoraAdapter): Promise<void> {
    return new Promise<void>((done, fail) => {
      this.waiting.push({ kind: "load", adapter, done, fail });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.switching) return;
    for (;;) {
      const next = this.waiting[0];
      if (next === undefined) return;
      if (next.kind === "call" && next.arm === this.holding) {
        this.waiting.shift();
        this.running += 1;
        next.admit();
        continue;
      }
      // A switch (of arm, or of adapter) waits for the calls in flight to end; their `leave` pumps again.
      if (this.running > 0) return;
      this.waiting.shift();
      this.switching = true;
      const target = next.kind === "load" ? next.adapter : next.arm === "base" ? undefined : this.adapter;
      try {
        await this.engine.setLora(target);
        this.holding = target === undefined ? "base" : "adapter";
        this.switches += 1;
        if (next.kind === "load") {
          this.adapter = next.adapter;
          next.done();
        } else {
          this.running += 1;
          next.admit();
          this.admitTurn();
        }
      } catch (error) {
        // The engine's adapter is unknown after a failed switch: the next turn switches again.
        this.holding = undefined;
        next.fail(error);
      } finally {
        this.switching = false;
      }
    }
  }

  /**
   * The turn takes every call of the held arm waiting before the next load, so mixed traffic switches once per turn,
   * not once per call; calls arriving during the turn wait behind the other arm's.
   */
  private admitTurn(): void {
    for (let i = 0; i < this.waiting.length; ) {
      const w = this.waiting[i] as Waiter;
      if (w.kind === "load") break;
      if (w.arm === this.holding) {
        this.waiting.splice(i, 1);
        this.running += 1;
        w.admit();
      } else i += 1;
    }
  }
}

/**
 * Two arms on one engine that takes turns between them (see the file's comment). `initial` is the adapter to start
 * with (`reflect serve --lora FILE`), already applied to the engine or not.
 */
export function engineArms(engine: AdapterEngine, options: { canaryPercent: number; initial?: LoraAdapter }): GatewayArms & { switches(): number } {
  const turns = new EngineTurns(engine, options.initial);
  /** Episodes pinned to the adapter now applied, and replacements waiting for them to end (see the file's comment). */
  let pinned = 0;
  let replacing = 0;
  /** Replacements waiting for `pinned` to reach 0, and pins waiting for `replacing` to reach 0. */
  let drained: Array<() => void> = [];
  let replaced: Array<() => void> = [];
  const baseId = engine.lora === undefined ? engine.modelId : engine.modelId.replace(/\+lora:.*$/u, "");
  const idOf = (a: LoraAdapter): string => `${baseId}+lora:${a.path.split(/[\\/]/u).pop() ?? a.path}${(a.scale ?? 1) === 1 ? "" : `@${a.scale}`}`;

  const armModel = (arm: ArmName): LanguageModel => ({
    specificationVersion: "v1",
    get modelId() {
      return arm === "base" || turns.adapter === undefined ? baseId : idOf(turns.adapter);
    },
    maxConcurrency: engine.maxConcurrency,
    async doGenerate(request: GenerateRequest): Promise<GenerateResult> {
      if (arm === "adapter" && turns.adapter === undefined) throw new ModelCallError("no adapter is loaded on the adapter arm — load one with POST /admin/lora", undefined, false);
      await turns.enter(arm, request.signal);
      try {
        return await engine.doGenerate(request);
      } finally {
        turns.leave();
      }
    },
    ...(engine.countTokens === undefined ? {} : { countTokens: engine.countTokens.bind(engine) }),
    // The engine is the caller's to close, once.
    close: async () => {},
  });
  const base = armModel("base");
  const withAdapter = armModel("adapter");

  /** Resolves when the replacements under way end; rejects with the signal's reason if it aborts first. */
  function afterReplacing(signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const go = (): void => {
        signal?.removeEventListener("abort", stop);
        resolve();
      };
      const stop = (): void => {
        replaced = replaced.filter((r) => r !== go);
        reject(signal?.reason);
      };
      replaced.push(go);
      signal?.addEventListener("abort", stop, { once: true });
    });
  }

  function unpin(): void {
    pinned -= 1;
    if (pinned > 0) return;
    const ready = drained;
    drained = [];
    for (const go of ready) go();
  }

  return {
    canaryPercent: options.canaryPercent,
    model: (arm) => (arm === "base" ? base : turns.adapter === undefined ? undefined : withAdapter),
    async pin(arm, signal) {
      if (arm === "base") return lease(base, () => {});
      // Checked again after each wait, in the same turn as the pin is counted: a load begun meanwhile goes first.
      while (replacing > 0) await afterReplacing(signal);
      signal?.throwIfAborted();
      if (turns.adapter === undefined) return undefined;
      pinned += 1;
      return lease(withAdapter, unpin);
    },
    async load(spec) {
      const next: LoraAdapter = { path: spec.path, ...(spec.scale === undefined ? {} : { scale: spec.scale }) };
      replacing += 1;
      try {
        // The episodes on the adapter before end on it; new ones wait for this one (`pin`).
        if (pinned > 0) await new Promise<void>((go) => drained.push(go));
        // Applied (and checked against the base) in the engine's turn, so a bad file is refused to the admin.
        await turns.load(next);
      } finally {
        replacing -= 1;
        if (replacing === 0) {
          const ready = replaced;
          replaced = [];
          for (const go of ready) go();
        }
      }
      return { model: idOf(next) };
    },
    switches: () => turns.switches,
  };
}

/** The adapter API of an OpenAI-compatible server (vLLM started with `--enable-lora` and runtime updating allowed). */
export interface AdapterServer {
  /** The server's base URL, `http://host/v1`. */
  baseUrl: string;
  /** Environment variable holding its key (sent as `Authorization: Bearer`), if any. */
  apiKeyEnv?: string;
  /** The prefix of the adapters' names; each load gets `<prefix>-<n>`. */
  prefix: string;
  /** An HTTP model for a served model name (the base's, or an adapter's). */
  modelFor(name: string): LanguageModel;
}

/**
 * Two arms on a server that loads adapters at run time: `load` posts `/v1/load_lora_adapter {lora_name, lora_path}`
 * under a fresh name, points the adapter arm at it (requests name it as their `model`), then unloads the one before
 * (`/v1/unload_lora_adapter`) — at once if no episode is pinned to it, else after the last one ends. Both arms serve
 * at once. A deferred unload that fails is told to the admin with the next load.
 */
export function vllmArms(base: LanguageModel, server: AdapterServer, options: { canaryPercent: number }): GatewayArms {
  const root = server.baseUrl.trim().replace(/\/+$/u, "");
  /** A loaded adapter: its served name, its model, the episodes pinned to it, and whether a newer one replaced it. */
  type Served = { name: string; model: LanguageModel; pinned: number; replaced: boolean };
  let current: Served | undefined;
  let serial = 0;
  let loading: Promise<unknown> = Promise.resolve();
  /** Deferred unloads that failed, for the next load's note. */
  let unloadFailures: string[] = [];

  /** Unloads a replaced adapter, in turn with loads; a failure is kept for the next load's note. */
  function retire(old: Served): void {
    loading = loading.then(() =>
      post("unload_lora_adapter", { lora_name: old.name }).catch((error: unknown) => {
        unloadFailures.push(`the adapter before (${old.name}) is still loaded on the upstream: ${(error as Error).message}`);
      }),
    );
  }

  async function post(endpoint: "load_lora_adapter" | "unload_lora_adapter", body: Record<string, string>): Promise<void> {
    const url = `${root}/${endpoint}`;
    const key = server.apiKeyEnv === undefined ? undefined : process.env[server.apiKeyEnv];
    let response: Response;
    try {
      response = await fetch(url, { method: "POST", headers: { "content-type": "application/json", ...(key === undefined || key === "" ? {} : { authorization: `Bearer ${key}` }) }, body: JSON.stringify(body), signal: AbortSignal.timeout(120_000) });
    } catch (error) {
      throw new ModelCallError(`POST ${url} failed: ${(error as Error).message} — is the upstream up at ${root}?`, undefined, true, { cause: error });
    }
    const text = await response.text();
    if (!response.ok) {
      const hint = response.status === 404 ? " — the upstream has no runtime LoRA API: start vLLM with --enable-lora and VLLM_ALLOW_RUNTIME_LORA_UPDATING=True" : "";
      throw new ModelCallError(`POST ${url} (${body.lora_name}) returned HTTP ${response.status}: ${text.replace(/\s+/gu, " ").trim().slice(0, 200) || "(empty body)"}${hint}`, response.status, false);
    }
  }

  return {
    canaryPercent: options.canaryPercent,
    model: (arm) => (arm === "base" ? base : current?.model),
    servedAdapter: () => current?.name,
    async pin(arm) {
      if (arm === "base") return lease(base, () => {});
      const held = current;
      if (held === undefined) return undefined;
      held.pinned += 1;
      return lease(
        held.model,
        () => {
          held.pinned -= 1;
          if (held.pinned === 0 && held.replaced) retire(held);
        },
        held.name,
      );
    },
    load(spec) {
      const next = loading.then(async () => {
        const name = `${server.prefix}-${++serial}`;
        await post("load_lora_adapter", { lora_name: name, lora_path: spec.path });
        const previous = current;
        current = { name, model: server.modelFor(name), pinned: 0, replaced: false };
        const notes = unloadFailures;
        unloadFailures = [];
        const answer = (more: string[] = []): { model: string; note?: string } => ({ model: (current as Served).model.modelId, ...(notes.length + more.length === 0 ? {} : { note: [...notes, ...more].join("; ") }) });
        if (previous === undefined) return answer();
        previous.replaced = true;
        if (previous.pinned > 0) return answer([`the adapter before (${previous.name}) is unloaded once its ${previous.pinned} request(s) in flight end`]);
        // An unload failure only leaves the old adapter loaded on the server: the swap stands, and the admin is told.
        try {
          await post("unload_lora_adapter", { lora_name: previous.name });
          return answer();
        } catch (error) {
          return answer([`the adapter before (${previous.name}) is still loaded on the upstream: ${(error as Error).message}`]);
        }
      });
      loading = next.catch(() => undefined);
      return next;
    },
  };
}
