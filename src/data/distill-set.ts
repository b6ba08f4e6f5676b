import type { RequestRecord } from "../critics/request/request-task.js";
import type { ChatMessage } from "../models/language-model.js";

/**
 * Why a recorded request gave no example. `vacuous`: its only checks cannot fail (a regex matching the empty reply, a
 * schema accepting every value), so its "pass" verified nothing — decided again from the recorded checks, so a record
 * written before the gateway called such a request unjudged is read the same.
 */
export type LeftOutReason = "failed" | "unjudged" | "vacuous" | "no-answer" | "duplicate";

/**
 * Whose traffic a distillation trains on: the tenants the operator names, or every tenant, said outright. An
 * episode's tenant is `episode.tenant`; a record written before tenants names none, and is `local`'s.
 */
export type TenantSelection = { kind: "named"; names: readonly string[] } | { kind: "all" };

/** One request as a training example. */
export interface DistillExample {
  /** The episode id, as recorded. */
  id: string;
  /** The record folder it came from (resolved). */
  source: string;
  /** The conversation as the model is shown it: the request's messages, with the tools prompt where it offered tools. */
  prompt: ChatMessage[];
  /** The verified answer as the assistant turn: its text, then its tool calls in the tools prompt's form. */
  answer: string;
  /** The answer was the first draft (no reflection was needed). */
  firstDraft: boolean;
  /** The tenant whose request it was (`tenantOf`). */
  tenant: string;
  /** The kinds of check that passed the answer (`schema`, `tools`, `regex`, `task`, `tests`, `judge`, …), vacuous ones left out. */
  checkedBy: string[];
  /** The request as recorded: its conversation, checks and dialect (for `held-out-requests.jsonl`). */
  record: RequestRecord;
  /** The model that wrote the answer. */
  model: string;
  /** sha256 of the prompt: same conversation, same key (the dedupe and split key). */
  key: string;
}

/**
 * A request on the held-out side, whatever became of it — passed, failed, unjudged or unanswered — so the arms are
 * compared on the traffic as it came, the requests the base failed included (`held-out-requests.jsonl`).
 */
export interface HeldOutRequest {
  id: string;
  source: string;
  record: RequestRecord;
  model: string;
  /** What the recorded answer was: the pass rate of the held-out traffic at recording. */
  outcome: "passed" | "failed" | "unjudged" | "vacuous" | "no-answer";
  /** The dedupe and split key (the conversation's sha256, as an example's). */
  key: string;
}

export interface DistillSourceSummary {
  dir: string;
  episodes: number;
  /** From the record's config.json, where it says. */
  reflectkit: string | null;
  openedAt: string | null;
  /** A last line still being written (or cut by a kill) was left out. */
  partialLastLine: number | null;
}

export interface DistillCounts {
  episodes: number;
  /** Requests whose returned answer passed its checks, before dedupe. */
  passed: number;
  passedFirstDraft: number;
  passedAfterReflection: number;
  /** The returned answer failed a check (a rollback to a failed attempt included). */
  failed: number;
  /** None of the request's own checks judged the returned answer (`cannot judge`, or none applied); a judge's pass alone is not a verdict. */
  unjudged: number;
  /** The request's only checks cannot fail (`LeftOutReason` `vacuous`), whatever the record says of the answer. */
  vacuous: number;
  /** Episodes of tenants the operator did not name (`TenantSelection`), left out before anything else; not in `episodes`. */
  otherTenants: number;
  /** The episode returned no answer (an upstream error before any attempt). */
  noAnswer: number;
  /** A passing request whose conversation an earlier kept example already had. */
  duplicates: number;
  train: number;
  heldOut: number;
  /** Requests on the held-out side, any outcome, deduplicated by conversation (`held-out-requests.jsonl`). */
  heldOutRequests: number;
  /** Per tenant read: its requests and the rows (train and held out) its traffic gave. */
  byTenant: Record<string, { requests: number; rows: number }>;
  /** Rows (train and held out) by the kind of check that passed them; a row checked by two kinds counts under each. */
  rowsByCheck: Record<string, number>;
}

export interface DistillSet {
  sources: DistillSourceSummary[];
  train: DistillExample[];
  heldOut: DistillExample[];
  /** Every held-out request, first of each conversation in record order, passed or not: what `reflect replay` sends. */
  heldOutRequests: HeldOutRequest[];
  counts: DistillCounts;
  /** Each duplicate left out, with the example kept for its conversation (the first in record order). */
  duplicates: { dropped: string; kept: string }[];
}

export interface DistillSplitOptions {
  /** Share of requests held out, in [0, 1). */
  heldOut: number;
  /** Seed of the split's hash. */
  seed: number;
}

export interface DistillSelectOptions extends DistillSplitOptions {
  /** Whose requests are read; the others are counted (`otherTenants`) and never seen again. */
  tenants: TenantSelection;
}
