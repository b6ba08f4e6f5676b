import http from "node:http";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { UsageError } from "../errors.js";
import { hostGuard } from "../serve/host-guard.js";
import { readRunFolders, type RunFolder } from "../data/run-folder.js";
import { viewData } from "./view-model.js";
import { viewerPage } from "./viewer-client.js";

export interface ViewerOptions {
  runDirs: readonly string[];
  /** 0 (default): a free port. */
  port?: number;
}

export interface RunningViewer {
  /** `http://127.0.0.1:PORT/` */
  url: string;
  port: number;
  runs: RunFolder[];
  close(): Promise<void>;
}

/**
 * Serves the episode browser of the run folders on 127.0.0.1 only: `/` the page, `/api/data` the episodes (with the
 * diffs between attempts computed here). The folders are read once, at start; nothing is written to them. A request
 * whose Host or Origin is not the server's own is refused (403): a page elsewhere must not read recorded prompts
 * through DNS rebinding.
 */
export async function startViewer(options: ViewerOptions): Promise<RunningViewer> {
  const runs = await readRunFolders(options.runDirs);
  const body = Buffer.from(JSON.stringify(viewData(runs)));
  const page = Buffer.from(viewerPage(`reflect view · ${runs.map((r) => r.label).join(" · ")}`));
  const pageUrl = (): string => `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const guard = hostGuard({ boundHost: "127.0.0.1", remedy: () => `open the page at ${pageUrl()} instead` });
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    const send = (status: number, type: string, content: Buffer | string) => {
      res.writeHead(status, { "content-type": type, "cache-control": "no-store", "x-content-type-options": "nosniff" });
      res.end(req.method === "HEAD" ? undefined : content);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "text/plain; charset=utf-8", "only GET\n");
    const refusal = guard({ host: req.headers.host, origin: req.headers.origin, "sec-fetch-site": header(req, "sec-fetch-site"), "sec-fetch-mode": header(req, "sec-fetch-mode") }, req.method);
    if (refusal !== null) return send(refusal.status, "text/plain; charset=utf-8", `${refusal.message}\n`);
    if (url.pathname === "/" || url.pathname === "/index.html") return send(200, "text/html; charset=utf-8", page);
    if (url.pathname === "/api/data") return send(200, "application/json; charset=utf-8", body);
    return send(404, "text/plain; charset=utf-8", "not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("listening", resolve);
    server.once("error", (error: NodeJS.ErrnoException) => {
      if (error.code === "EADDRINUSE" || error.code === "EACCES") reject(new UsageError(`cannot listen on 127.0.0.1:${options.port} (${error.code}) — pass another --port, or leave it out for a free one`, { cause: error }));
      else reject(error);
    });
    server.listen(options.port ?? 0, "127.0.0.1");
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/`,
    port,
    runs,
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, "close");
    },
  };
}

/** A request header Node may give as a list: its first value. */
function header(req: http.IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value[0] : value;
}
