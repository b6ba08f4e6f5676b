/**
 * The writer half of the record writer's kill test: appends episodes to the record folder `argv[2]` from `argv[4]`
 * concurrent loops, ids `<argv[3]>-0`, `<argv[3]>-1`, …, and prints each id on stdout once its append resolved
 * (acknowledged), until it is killed. Not a test file itself (a `test-*` name would make `node --test dist/` run it).
 */
import { requestEpisode } from "./record-fixture.js";
import { openRecordWriter } from "./record-writer.js";

const [dir, prefix, loops] = process.argv.slice(2);
if (dir === undefined || prefix === undefined || loops === undefined) throw new Error("usage: record-writer-child DIR PREFIX LOOPS");
const writer = await openRecordWriter({ dir, recordContent: true, config: { kind: "gateway", test: "kill" } });
// Long lines (about 20 kB), so a kill often lands inside a write.
const padding = "x".repeat(20_000);
let next = 0;
async function loop(): Promise<never> {
  for (;;) {
    const id = `${prefix}-${next++}`;
    await writer.append(requestEpisode({ id, passes: [false, true], question: `${id} ${padding}` }));
    process.stdout.write(`${id}\n`);
  }
}
await Promise.all(Array.from({ length: Number(loops) }, loop));
