/**
 * Which arm a request runs on (src/serve/arms.ts), and which recorded episode it replays: read from its `reflect`
 * field, its headers, or the hash of its body.
 */
import { createHash } from "node:crypto";
import type { IncomingMessage } from "node:http";
import { RequestFieldError } from "../errors.js";
import { armOf, type ArmName, type GatewayArms } from "./arms.js";
import { ARM_KEY_CHARS, type ChatRequest } from "./loop-request.js";

/**
 * The arm of a reflected request: the one it forces (`reflect.arm`), else the canary's pick by the hash of
 * `reflect.arm_key`, the `x-reflect-arm-key` header, or the body's bytes. The base while no adapter is loaded.
 */
export function armFor(arms: GatewayArms | undefined, chat: ChatRequest, incoming: IncomingMessage, bytes: Buffer): ArmName {
  const reflect = chat.reflect as NonNullable<ChatRequest["reflect"]>;
  const loaded = arms?.model("adapter") !== undefined;
  if (reflect.arm !== undefined) {
    if (reflect.arm === "adapter" && !loaded) throw new RequestFieldError("reflect.arm", "is adapter, but this gateway has no adapter loaded (start it with --lora FILE, or load one with POST /admin/lora)");
    return reflect.arm;
  }
  if (arms === undefined || !loaded || arms.canaryPercent === 0) return "base";
  return armOf(reflect.armKey ?? canaryKey(incoming, bytes), arms.canaryPercent);
}

/**
 * The arm of a pass-through request, by the same canary: the hash of the `x-reflect-arm-key` header or of the body's
 * bytes. Undefined on a gateway without arms; the base while no adapter is loaded.
 */
export function passThroughArm(arms: GatewayArms | undefined, incoming: IncomingMessage, bytes: Buffer): ArmName | undefined {
  if (arms === undefined) return undefined;
  if (arms.model("adapter") === undefined || arms.canaryPercent === 0) return "base";
  return armOf(canaryKey(incoming, bytes), arms.canaryPercent);
}

/** What the canary hashes when the request names no `reflect.arm_key`: the `x-reflect-arm-key` header, else the body. */
function canaryKey(incoming: IncomingMessage, bytes: Buffer): string {
  const header = incoming.headers["x-reflect-arm-key"];
  const fromHeader = Array.isArray(header) ? header[0] : header;
  if (fromHeader !== undefined && (fromHeader === "" || fromHeader.length > ARM_KEY_CHARS)) throw new RequestFieldError("x-reflect-arm-key", `must be a non-empty header of at most ${ARM_KEY_CHARS} characters`);
  return fromHeader ?? `body:${createHash("sha256").update(bytes).digest("hex")}`;
}

/** `x-reflect-replay-of`: the recorded episode a replayed request repeats (`reflect replay` sends it). */
export function replayOfHeader(incoming: IncomingMessage): string | undefined {
  const header = incoming.headers["x-reflect-replay-of"];
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9._:-]{1,128}$/u.test(value)) throw new RequestFieldError("x-reflect-replay-of", "must be an episode id: 1–128 letters, digits, . _ : or -");
  return value;
}
