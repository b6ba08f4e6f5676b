import { ReflectkitError } from "../errors.js";

/** How CI and developers get the sandbox; every "unavailable" message ends with it. */
export const INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: `apt-get install -y bubblewrap`; it also needs util-linux's prlimit and /usr/bin/python3)";

/**
 * No working sandbox on this machine, so untrusted code is refused rather than run unconfined. `reason` says what
 * failed (no bwrap on PATH, namespaces refused, …); the message always says what to install.
 */
export class SandboxUnavailableError extends ReflectkitError {
  override name = "SandboxUnavailableError";
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(`no sandbox available — ${INSTALL_HINT}. What failed: ${reason}`, options);
  }
}
