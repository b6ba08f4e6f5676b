import type { Command } from "commander";
import { startViewer } from "../report/viewer-server.js";
import { int } from "./parse.js";

/** `reflect view`: browse the episodes of run folders in a local page until interrupted. */
export function registerView(program: Command): void {
  program
    .command("view")
    .description("serve a local page (127.0.0.1) to browse a run's episodes: attempts, feedback, reflections, retries, diffs; filters and search")
    .argument("<run-dir...>", "run folders (reflect eval or reflect data generate)")
    .option("--port <n>", "port on 127.0.0.1 (0: a free one)", int(0), 0)
    .action(async (runDirs: string[], flags: { port: number }) => {
      const viewer = await startViewer({ runDirs, port: flags.port });
      const episodes = viewer.runs.reduce((n, r) => n + (r.kind === "eval" ? r.episodes.length : r.items.length), 0);
      process.stdout.write(`reflect view: ${episodes} episodes of ${viewer.runs.length} run${viewer.runs.length === 1 ? "" : "s"} at ${viewer.url}\nopen an episode with ${viewer.url}#episode=<id>; Ctrl-C stops the server\n`);
      await new Promise<void>((resolve) => {
        const stop = () => {
          process.off("SIGINT", stop);
          process.off("SIGTERM", stop);
          resolve();
        };
        process.on("SIGINT", stop);
        process.on("SIGTERM", stop);
      });
      await viewer.close();
    });
}
