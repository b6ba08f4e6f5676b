import type { Episode } from "../loops/types.js";
import type { DialectName } from "./dialects/dialect.js";

/** Why an upstream call failed, for metrics: no answer in time, an HTTP error status, no connection, an unreadable body. */
export type UpstreamFailure = "timeout" | "status" | "network" | "malformed";

/** One request the gateway answered, however it ended. */
export interface RequestOutcome {
  /** `pass-through`: no reflection asked; `reflected`: the loop ran; `rejected`: answered 4xx/5xx before any upstream call. */
  kind: "pass-through" | "reflected" | "rejected";
  /** The HTTP status sent. */
  status: number;
  /** From the request's arrival to the response's end. */
  ms: number;
  stream: boolean;
  /** The loop's episode (reflected requests). */
  episode?: Episode;
  upstreamFailure?: UpstreamFailure;
  /** The dialect the request came in (its route); absent for requests to no dialect's route. */
  dialect?: DialectName;
  /** The arm a request ran on (a pass-through's only on a gateway with arms). */
  arm?: "base" | "adapter";
  /** The tenant that sent it (src/serve/tenants.ts); absent for a request refused before its key was read. */
  tenant?: string;
  /** The operator's policy it ran under (src/serve/policy.ts), `none` for none; absent on a gateway without a config. */
  policy?: string;
}

/** What the server tells metrics (`/metrics`) about each request. */
export interface GatewayObserver {
  request(outcome: RequestOutcome): void;
}

export const noopObserver: GatewayObserver = { request: () => {} };
