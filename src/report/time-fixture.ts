/**
 * A gateway record whose requests spread over hours, for the time-axis tests (unit, CLI and browser). Every figure
 * of its time table is worked out by hand in `timeFixtureExpected`. Not a test file itself (a `test-*` name would
 * make `node --test dist/` run it as one).
 */
import { requestEpisode } from "../record/record-fixture.js";
import { openRecordWriter } from "../record/record-writer.js";
import type { Episode } from "../loops/types.js";

const at = (time: string) => `2026-11-25T${time}Z`;

/** 10:00 — 4 requests; 11:00 — none; 12:00 — 2; 13:00 — 3; and one written before episodes had start times. */
export function timeFixtureEpisodes(): Episode[] {
  return [
    requestEpisode({ id: "a", passes: [true], startedAt: at("10:05:00") }),
    requestEpisode({ id: "b", passes: [false, true], startedAt: at("10:15:00") }),
    requestEpisode({ id: "c", passes: [false, true], startedAt: at("10:59:59.999") }),
    requestEpisode({ id: "d", passes: [false, false], selected: 1, startedAt: at("10:30:00") }),
    requestEpisode({ id: "e", passes: [true], startedAt: at("12:00:00") }),
    requestEpisode({ id: "f", passes: [true], startedAt: at("12:40:00") }),
    requestEpisode({ id: "g", passes: [false, false], startedAt: at("13:10:00") }),
    requestEpisode({ id: "h", passes: [false, true], startedAt: at("13:20:00") }),
    requestEpisode({ id: "i", passes: [true], startedAt: at("13:30:00") }),
    requestEpisode({ id: "old", passes: [false, true] }),
  ];
}

/**
 * By hand: every call costs 10 + 5 tokens; an episode of one attempt makes 1 call, of two attempts 3 (a reflection
 * between them). 10:00: first drafts a passed (1/4), after reflection a, b, c (3/4), 3 reflections, 10 calls.
 * 12:00: 2/2 and 2/2, none, 2 calls. 13:00: i (1/3), then h and i (2/3), 2 reflections, 7 calls.
 */
export const timeFixtureExpected = [
  { label: "2026-11-25 10:00", requests: 4, firstPass: 1, finalPass: 3, liftPoints: 50, reflections: 3, tokensPerRequest: (10 * 15) / 4, callsPerRequest: 10 / 4 },
  { label: "2026-11-25 12:00", requests: 2, firstPass: 2, finalPass: 2, liftPoints: 0, reflections: 0, tokensPerRequest: 15, callsPerRequest: 1 },
  { label: "2026-11-25 13:00", requests: 3, firstPass: 1, finalPass: 2, liftPoints: 100 / 3, reflections: 2, tokensPerRequest: (7 * 15) / 3, callsPerRequest: 7 / 3 },
];

/** Writes the fixture as a gateway record (without content) into `dir`. */
export async function writeTimeFixture(dir: string): Promise<void> {
  const writer = await openRecordWriter({ dir, recordContent: false, config: { kind: "gateway", upstream: "http://127.0.0.1:9/v1#upstream" } });
  for (const episode of timeFixtureEpisodes()) await writer.append(episode);
  await writer.close();
}
