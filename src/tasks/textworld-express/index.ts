/**
 * TextWorldExpress (Jansen & Côté, 2022) as an environment task: text games run by the package's own simulator (a jar
 * in a JVM), the actor types one command per call, and the verdict is the game's own success flag. Games, seeds and
 * gold action sequences come from the pinned `textworld-express` wheel (see package.ts).
 */
import path from "node:path";
import { UsageError } from "../../errors.js";
import type { ChatMessage, ToolCall, ToolDefinition } from "../../models/language-model.js";
import { unjudgedText, type EnvironmentSession, type EnvironmentTask, type Observation } from "../environment.js";
import type { TaskFamily } from "../task-family.js";
import type { Task, TaskItem, Verdict } from "../task.js";
import { ensureTextworldExpressPackage, type TextworldExpressPackageOptions } from "./package.js";
import { TextworldExpressWorker } from "./worker.js";

export { TEXTWORLD_EXPRESS_WHEELS, ensureTextworldExpressPackage, textworldExpressPackageDir, type TextworldExpressPackageOptions } from "./package.js";
export { TEXTWORLD_EXPRESS_REQUEST_TIMEOUT_MS, TextworldExpressWorker, textworldExpressWorkerScript } from "./worker.js";

/**
 * The games and the parameters each is played with, fixed (the jar's own names; "" is the game's defaults). Small
 * worlds without doors or distractors, so a small model can finish a game within the step limit.
 */
export const TEXTWORLD_EXPRESS_GAMES = {
  coin: "numLocations=4,numDistractorItems=0,includeDoors=0,limitInventorySize=0",
  mapreader: "numLocations=5,maxDistanceApart=2,maxDistractorItemsPerLocation=0,includeDoors=0,limitInventorySize=0",
  cookingworld: "numLocations=1,numIngredients=2,numDistractorItems=0,includeDoors=0,limitInventorySize=0",
  twc: "numLocations=1,numItemsToPutAway=2,includeDoors=0,limitInventorySize=0",
  arithmetic: "",
  sorting: "",
  simonsays: "",
  peckingorder: "",
} as const;
export type TextworldExpressGame = keyof typeof TEXTWORLD_EXPRESS_GAMES;
export const TEXTWORLD_EXPRESS_GAME_NAMES = Object.keys(TEXTWORLD_EXPRESS_GAMES) as TextworldExpressGame[];

/** The game a run plays without --data: Coin Collector in four rooms (see docs/08-tasks-and-models.md for why). */
export const TEXTWORLD_EXPRESS_DEFAULT_GAME: TextworldExpressGame = "coin";

/** The most actor steps (model calls) of a trial. */
export const TEXTWORLD_EXPRESS_STEPS = 50;

/** The longest command sent to a game; a longer one is answered as not understood without reaching the game. */
export const TEXTWORLD_EXPRESS_COMMAND_CHARS = 1000;

/**
 * The splits items come from: `test` (scored: `--data GAME`) and `train` (`--data GAME:train`, for lessons a later run
 * on the test split recalls, never scored). The jar's dev split is not offered: nothing here is tuned on it.
 */
export const TEXTWORLD_EXPRESS_SPLITS = ["test", "train"] as const;
export type TextworldExpressSplit = (typeof TEXTWORLD_EXPRESS_SPLITS)[number];

/** One game: the game, its fixed parameters, a split and a seed of that split. */
export interface TextworldExpressRecord {
  game: TextworldExpressGame;
  params: string;
  /** Absent: the test split (test items never carry it, so their records are as they were before splits existed). */
  split?: TextworldExpressSplit;
  seed: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function isGame(name: unknown): name is TextworldExpressGame {
  return typeof name === "string" && Object.hasOwn(TEXTWORLD_EXPRESS_GAMES, name);
}

function isSplit(name: unknown): name is TextworldExpressSplit {
  return typeof name === "string" && (TEXTWORLD_EXPRESS_SPLITS as readonly string[]).includes(name);
}

/** A record's split: absent is the test split. */
export function splitOf(record: TextworldExpressRecord): TextworldExpressSplit {
  return record.split ?? "test";
}

function unknownGame(name: string): UsageError {
  return new UsageError(`unknown TextWorldExpress game "${name}" — pass --data with one of: ${TEXTWORLD_EXPRESS_GAME_NAMES.join(", ")}`);
}

function unknownSplit(split: string): UsageError {
  const shown = JSON.stringify(split.slice(0, 100));
  return new UsageError(`unknown TextWorldExpress split ${shown} — pass --data GAME (the test split, scored) or GAME:train (the train split, for lessons), GAME one of: ${TEXTWORLD_EXPRESS_GAME_NAMES.join(", ")}; the dev split is not offered`);
}

/** `--data` as a game and a split: `coin` is coin's test split, `coin:train` its train split. */
export function parseTextworldExpressData(data: string): { game: TextworldExpressGame; split: TextworldExpressSplit } {
  const colon = data.indexOf(":");
  const game = colon === -1 ? data : data.slice(0, colon);
  if (!isGame(game)) throw unknownGame(game.slice(0, 100));
  if (colon === -1) return { game, split: "test" };
  const split = data.slice(colon + 1);
  // `coin:test` is refused too: the test split's name is `coin`, so one run folder's --data means one thing.
  if (split !== "train") throw unknownSplit(split);
  return { game, split };
}

/** An item's id: `coin-20000` for a test seed (as before the train split existed), `coin-train-5` for a train seed. */
export function textworldExpressItemId(record: Pick<TextworldExpressRecord, "game" | "split" | "seed">): string {
  return record.split === "train" ? `${record.game}-train-${record.seed}` : `${record.game}-${record.seed}`;
}

/** Validates a record, or throws with the reason. The parameters are the game's fixed ones (filled in when absent). */
export function parseTextworldExpressRecord(value: unknown): TextworldExpressRecord {
  if (!isObject(value)) throw new Error("a record must be a JSON object");
  const { game, seed, params, split } = value;
  if (!isGame(game)) throw new Error(`"game" must be one of ${TEXTWORLD_EXPRESS_GAME_NAMES.join(", ")}`);
  if (!Number.isSafeInteger(seed) || (seed as number) < 0) throw new Error('"seed" must be an integer ≥ 0');
  const fixed = TEXTWORLD_EXPRESS_GAMES[game];
  if (params !== undefined && params !== fixed) throw new Error(`"params" of ${game} are fixed: "${fixed}"`);
  if (split !== undefined && !isSplit(split)) throw new Error(`"split" must be one of ${TEXTWORLD_EXPRESS_SPLITS.join(", ")}`);
  return { game, params: fixed, ...(split === undefined ? {} : { split }), seed: seed as number };
}

/** The one tool: a command typed into the game. */
export const ACT_TOOL: ToolDefinition = {
  name: "act",
  description: "Type one command into the game, exactly as one of the valid actions listed with each observation.",
  parameters: {
    type: "object",
    properties: { command: { type: "string", description: 'one valid action, such as "look around"' } },
    required: ["command"],
  },
};

/** A UTF-16 surrogate without its pair: text no UTF-8 encoder takes, so the JVM bridge would refuse the whole call. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * A command as the game reads it: white space trimmed and each run folded to one space, a lone surrogate made U+FFFD.
 * Case stays: the game matches actions exactly, and some are written with capitals ("take used Q-tip").
 */
export function normaliseCommand(command: string): string {
  return command.replace(LONE_SURROGATE, "\uFFFD").trim().replace(/\s+/g, " ");
}

function withActions(observation: string, actions: readonly string[]): string {
  return `${observation.trim()}\n\nValid actions: ${actions.join(", ")}`;
}

function openingOf(record: TextworldExpressRecord, reset: { task: string; observation: string; validActions: string[] }): ChatMessage {
  const content = [
    `You are playing a text game (TextWorldExpress ${record.game}). ${reset.task.trim()}`,
    withActions(reset.observation, reset.validActions),
    "Take one action at a time: call the act tool with the command, or reply with the command alone. When the game says it is over, reply without a tool call.",
  ].join("\n\n");
  return { role: "user", content };
}

interface GameStep {
  over: boolean;
  refused: boolean;
  observation: string;
  validActions: string[];
  success?: boolean;
}

function observationOf(step: GameStep): string {
  if (step.refused) return step.observation;
  if (!step.over) return withActions(step.observation, step.validActions);
  return `${step.observation.trim()}\n\nThe game is over: ${step.success === true ? "you won" : "you did not win"}.`;
}

/** The verdict's feedback, in words the actor may be shown. */
function feedbackOf(answer: { success: boolean; failure: boolean; score: number; moves: number; limit: number; last: string }): string {
  const score = answer.score.toFixed(2);
  if (answer.success) return `the game was won in ${answer.moves} actions`;
  const last = answer.last.trim().slice(0, 300);
  if (answer.failure) return `the game was lost after ${answer.moves} actions (score ${score}); the game's last words: "${last}"`;
  if (answer.moves >= answer.limit) return `the game's limit of ${answer.limit} actions was reached without winning (score ${score})`;
  return `the trajectory ended after ${answer.moves} actions with the game not won (score ${score}); the game's last words: "${last}"`;
}

let trialCounter = 0;

/**
 * The valid action a reply names first (by where it starts in the reply; the longest of those starting there), for a
 * model that types its action instead of calling act: "> take coin", "look around", or a list of actions whose first
 * is the one taken. Matched case-blind on whole words; none: the reply is not an action.
 */
export function actionNamed(reply: string, actions: readonly string[]): string | null {
  const text = reply.toLowerCase();
  let best: { at: number; action: string } | null = null;
  for (const action of actions) {
    const needle = action.toLowerCase();
    if (needle === "") continue;
    for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
      const before = at === 0 ? "" : (text[at - 1] as string);
      const after = text[at + needle.length] ?? "";
      if (/[\p{L}\p{N}_]/u.test(before) || /[\p{L}\p{N}_]/u.test(after)) continue;
      if (best === null || at < best.at || (at === best.at && action.length > best.action.length)) best = { at, action };
      break;
    }
  }
  return best?.action ?? null;
}

class TextworldExpressSession implements EnvironmentSession {
  readonly opening: readonly ChatMessage[];
  private closed = false;
  private actions: readonly string[];
  private typed = 0;

  constructor(
    private readonly worker: TextworldExpressWorker,
    private readonly trial: number,
    opening: ChatMessage,
    actions: readonly string[],
  ) {
    this.opening = [opening];
    this.actions = actions;
  }

  /** A typed action among the valid ones, as one act call (ids `typed_N`, so the record shows it was read from text). */
  actionsIn(reply: string): ToolCall[] {
    const action = actionNamed(reply, this.actions);
    return action === null ? [] : [{ id: `typed_${this.typed++}`, name: ACT_TOOL.name, arguments: JSON.stringify({ command: action }) }];
  }

  tools(): readonly ToolDefinition[] {
    return [ACT_TOOL];
  }

  async act(calls: readonly ToolCall[], signal?: AbortSignal): Promise<Observation[]> {
    const out: Observation[] = [];
    for (const call of calls) {
      const refused = refusal(call);
      if (typeof refused === "string") {
        out.push({ callId: call.id, content: refused, isError: true });
        continue;
      }
      const step = (await this.worker.request("act", { trial: this.trial, command: refused.command }, signal)) as unknown as GameStep;
      if (!step.refused) this.actions = step.over ? [] : step.validActions;
      out.push({ callId: call.id, content: observationOf(step), isError: step.refused });
    }
    return out;
  }

  /** One user turn: the trajectory ends with the first reply that calls no tool. */
  async next(): Promise<ChatMessage | null> {
    return null;
  }

  async verdict(signal?: AbortSignal): Promise<Verdict> {
    const answer = (await this.worker.request("verdict", { trial: this.trial }, signal)) as unknown as Parameters<typeof feedbackOf>[0];
    return { correct: answer.success, score: answer.score, feedback: feedbackOf(answer), answer: null };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.worker.alive) await this.worker.request("close", { trial: this.trial }).catch(() => undefined);
  }
}

/** Why a call does not reach the game (an observation's text), or the command it sends. */
function refusal(call: ToolCall): string | { command: string } {
  if (call.name !== ACT_TOOL.name) return `Unknown tool "${call.name.slice(0, 100)}": the one tool is act, with a command.`;
  let args: unknown;
  try {
    args = JSON.parse(call.arguments === "" ? "{}" : call.arguments);
  } catch {
    return 'The arguments are not JSON: call act with {"command": "<one valid action>"}.';
  }
  if (!isObject(args) || typeof args.command !== "string") return 'act needs a string "command": call act with {"command": "<one valid action>"}.';
  if (args.command.length > TEXTWORLD_EXPRESS_COMMAND_CHARS) return `Unknown action: a command is at most ${TEXTWORLD_EXPRESS_COMMAND_CHARS} characters; type one of the valid actions.`;
  return { command: normaliseCommand(args.command) };
}

export interface TextworldExpressTask extends EnvironmentTask<TextworldExpressRecord> {
  /** The environment process the sessions share, started on first use; a dead one is replaced by the next. */
  worker(): Promise<TextworldExpressWorker>;
  /** A game's test-split seeds, as the jar lists them. */
  testSeeds(game: TextworldExpressGame): Promise<number[]>;
  /** A game's seeds of a split, as the jar lists them (`getSeedsTest`, `getSeedsTrain`). */
  seeds(game: TextworldExpressGame, split: TextworldExpressSplit): Promise<number[]>;
  /** A game's gold action sequence, from the jar (for replays; never shown to an actor). */
  goldActions(record: TextworldExpressRecord): Promise<string[]>;
  /** Ends the shared environment process and its JVM. */
  shutdown(): void;
}

/** The task. One Python process and one JVM serve every session of the task, each session a game of its own. */
export function textworldExpressTask(options: TextworldExpressPackageOptions = {}): TextworldExpressTask {
  let current: TextworldExpressWorker | null = null;
  const worker = async (): Promise<TextworldExpressWorker> => {
    if (current !== null && current.alive) return current;
    current = new TextworldExpressWorker(await ensureTextworldExpressPackage(options), options.python);
    return current;
  };
  const seeds = async (game: TextworldExpressGame, split: TextworldExpressSplit): Promise<number[]> => {
    if (!isGame(game)) throw unknownGame(String(game));
    if (!isSplit(split)) throw unknownSplit(String(split));
    const answer = await (await worker()).request("seeds", { game, params: TEXTWORLD_EXPRESS_GAMES[game], split });
    return answer.seeds as number[];
  };
  return {
    name: "textworld-express",
    defaultSteps: TEXTWORLD_EXPRESS_STEPS,
    prompt: (record) => [{ role: "user", content: `TextWorldExpress ${record.game}, ${splitOf(record)} seed ${record.seed}: the game gives its opening when a session starts.` }],
    verify: () => unjudgedText("textworld-express"),
    parseRecord: parseTextworldExpressRecord,
    // The gold action sequence lives in the game, not in the record; one of many winning sequences besides.
    reference: () => null,
    worker,
    shutdown: () => {
      current?.kill();
      current = null;
    },
    testSeeds: (game) => seeds(game, "test"),
    seeds,
    async goldActions(record) {
      const answer = await (await worker()).request("gold", { game: record.game, params: record.params, split: splitOf(record), seed: record.seed });
      return answer.actions as string[];
    },
    async environment(record, opts) {
      const w = await worker();
      const trial = ++trialCounter;
      const reset = (await w.request("reset", { trial, game: record.game, params: record.params, split: splitOf(record), seed: record.seed }, opts?.signal)) as unknown as Parameters<typeof openingOf>[1];
      return new TextworldExpressSession(w, trial, openingOf(record, reset), reset.validActions);
    },
  };
}

/**
 * A game's items (`data`: `coin`, or `coin:train`): one per seed of the split, in the jar's order. Test items keep the
 * records and ids they had before splits existed (`coin-20000`, no `split` field); train items name their split in
 * both (`coin-train-5`), so a lesson store, which keys lessons by item id, never takes a train lesson for a test item's own.
 */
export async function loadTextworldExpress(data: string, task: TextworldExpressTask = textworldExpressTask()): Promise<TaskItem<TextworldExpressRecord>[]> {
  const { game, split } = parseTextworldExpressData(data);
  const params = TEXTWORLD_EXPRESS_GAMES[game];
  return (await task.seeds(game, split)).map((seed) => {
    const record: TextworldExpressRecord = split === "test" ? { game, params, seed } : { game, params, split, seed };
    return { id: textworldExpressItemId(record), record };
  });
}

export const textworldExpressFamily: TaskFamily = {
  name: "textworld-express",
  description: `TextWorldExpress text games (--data ${TEXTWORLD_EXPRESS_GAME_NAMES.join(", ")}; default ${TEXTWORLD_EXPRESS_DEFAULT_GAME}), one item per test seed (GAME:train: per train seed, for lessons), an environment of the pinned package's simulator, its success flag`,
  scorer: "the game's own success flag",
  create: () => textworldExpressTask() as unknown as Task<unknown>,
  defaultNamed: TEXTWORLD_EXPRESS_DEFAULT_GAME,
  load: (file, task) => loadTextworldExpress(path.basename(file), "testSeeds" in task ? (task as unknown as TextworldExpressTask) : undefined),
};
