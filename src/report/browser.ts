import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { BrowserContext } from "playwright-core";
import { ReflectkitError } from "../errors.js";

/** Debian's and Ubuntu's Chromium package. playwright-core drives it; no browser is ever downloaded. */
export const DEFAULT_CHROMIUM = "/usr/bin/chromium";

/** How CI and developers get the browser; every "unavailable" message ends with it. */
export const CHROMIUM_HINT = "install Chromium (Debian/Ubuntu: `apt-get install -y chromium`), or pass --chromium PATH / set REFLECTKIT_CHROMIUM";

/** Headless, offline, no sandbox (CI runs as root), nothing phoning home. */
export const CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"];

export class BrowserUnavailableError extends ReflectkitError {
  override name = "BrowserUnavailableError";
  constructor(
    readonly executablePath: string,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`no headless browser at ${executablePath} — ${CHROMIUM_HINT}. What failed: ${reason}`, options);
  }
}

/** The browser to use: the one named, else `$REFLECTKIT_CHROMIUM`, else /usr/bin/chromium. */
export function chromiumPath(explicit?: string): string {
  return explicit ?? process.env.REFLECTKIT_CHROMIUM ?? DEFAULT_CHROMIUM;
}

export function chromiumAvailable(executablePath: string): boolean {
  return existsSync(executablePath);
}

export interface HeadlessBrowser {
  context: BrowserContext;
  close(): Promise<void>;
}

/**
 * Starts Chromium headless with a fresh user-data folder (removed on close), so no profile, cache or extension from
 * an earlier run can change what a page shows. Throws BrowserUnavailableError when it is absent or will not start.
 */
export async function launchChromium(options: { executablePath?: string; deviceScaleFactor?: number; viewport?: { width: number; height: number } } = {}): Promise<HeadlessBrowser> {
  const executablePath = chromiumPath(options.executablePath);
  if (!chromiumAvailable(executablePath)) throw new BrowserUnavailableError(executablePath, "no such file");
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), "reflectkit-chromium-"));
  let context: BrowserContext;
  try {
    // Loaded here, not at the top: every other `reflect` command would pay for it at start.
    const { chromium } = await import("playwright-core");
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath,
      headless: true,
      args: CHROMIUM_ARGS,
      deviceScaleFactor: options.deviceScaleFactor ?? 1,
      viewport: options.viewport ?? { width: 1280, height: 900 },
      offline: false,
      timeout: 60_000,
    });
  } catch (error) {
    await rm(userDataDir, { recursive: true, force: true });
    throw new BrowserUnavailableError(executablePath, (error as Error).message.split("\n")[0] ?? "launch failed", { cause: error });
  }
  return {
    context,
    close: async () => {
      await context.close();
      await rm(userDataDir, { recursive: true, force: true });
    },
  };
}
