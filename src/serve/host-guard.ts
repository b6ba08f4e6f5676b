/**
 * What keeps a web page the user happens to visit from using a local server that has no key: the gateway (which
 * would spend the upstream's key) and `reflect view` (which would hand over recorded prompts).
 *
 * Two ways in, two rules. DNS rebinding: the page's own name (`evil.example`) is made to resolve to 127.0.0.1, so the
 * browser treats the server as the page's origin — but it still sends `Host: evil.example`, so a request must name
 * the server by one of its own names. Cross-site requests: a page may send a POST to any address without asking
 * (a "simple" request, no CORS preflight) if its content type is a form's or text — so a POST must say
 * `application/json`, which a browser sends cross-site only after a preflight the server does not answer; and a
 * request a browser marks as cross-site (`Origin` of another host, `Sec-Fetch-Site: cross-site`) is refused.
 */

/** The request headers the guard reads (lower-case names, as Node gives them). */
export interface GuardedHeaders {
  host?: string | undefined;
  origin?: string | undefined;
  "sec-fetch-site"?: string | undefined;
  "sec-fetch-mode"?: string | undefined;
  "content-type"?: string | undefined;
}

/** Why a request is refused: 403 for whom it comes from, 415 for what it carries; `header` is the one at fault. */
export interface GuardRefusal {
  status: 403 | 415;
  header: "host" | "origin" | "sec-fetch-site" | "content-type";
  /** OpenAI-style error code: `host_not_allowed`, `origin_not_allowed`, `cross_site_request`, `unsupported_media_type`. */
  code: string;
  /** Names the header and says what to do. */
  message: string;
}

export interface HostGuardOptions {
  /** The address the server listens on (`--host`): its names are allowed (see `allowedNames`). */
  boundHost: string;
  /** More names the server is reached by (`--allowed-host`), e.g. a DNS name in front of a gateway on 0.0.0.0. */
  allowedHosts?: readonly string[];
  /** What the user should do about a refused name, e.g. `start the gateway with --allowed-host NAME`. */
  remedy?: (name: string) => string;
}

/** Whether `host` (an address or `localhost`) is loopback: 127.0.0.0/8, ::1, localhost. */
export function isLoopbackHost(host: string): boolean {
  const name = hostName(host.includes(":") && !host.startsWith("[") ? `[${host}]` : host);
  return name !== undefined && loopbackName(name);
}

/**
 * The name in a Host header (or `--allowed-host` value), lower-case, without its port: `localhost`, `127.0.0.1`,
 * `[::1]`. Undefined when it is not a bare host (a URL, a user part, a path): such a Host is refused.
 */
export function hostName(value: string): string | undefined {
  const match = /^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::\d{1,5})?$/iu.exec(value.trim());
  if (match === null) return undefined;
  // URL normalises as a browser does (IPv6 spelling, `127.1`, case); `localhost.` is `localhost`.
  try {
    return new URL(`http://${match[1] as string}`).hostname.replace(/\.$/u, "");
  } catch {
    return undefined;
  }
}

/**
 * The guard for a server bound to `boundHost`: `(headers, method) → null` (let the request through) or the refusal.
 *
 * - `Host` must be a name of the server: for a loopback bind `localhost`, any 127.x.x.x and `[::1]`; for a bind to
 *   every address (0.0.0.0, ::) those and any IP literal (a rebinding page's Host is always its own DNS name); for
 *   another address that address; plus `allowedHosts`. The port is not compared: a rebinding page reaches the same
 *   port anyway, and a proxy in front may name another. A request with no Host at all (HTTP/1.0) is refused: every
 *   client of these servers sends one, and "allowed" should never depend on a header being left out.
 * - `Origin`, when sent, must carry an allowed name (`null`, from a sandboxed page or a file, is refused).
 * - `Sec-Fetch-Site: cross-site` is refused, except a GET or HEAD navigation (a link followed from another site:
 *   that site cannot read the answer).
 * - A POST must be `application/json` (any parameters): no browser sends that cross-site without a preflight.
 */
export function hostGuard(options: HostGuardOptions): (headers: GuardedHeaders, method: string) => GuardRefusal | null {
  const allowed = allowedNames(options.boundHost, options.allowedHosts ?? []);
  const remedy = options.remedy ?? ((name: string) => `start the server with --allowed-host ${name}`);
  // A server sees the same few Host values on every request: each is parsed once (bounded, so odd ones cannot grow it).
  const seen = new Map<string, string | undefined>();
  const nameOf = (host: string): string | undefined => {
    if (seen.has(host)) return seen.get(host);
    const name = hostName(host);
    if (seen.size >= 256) seen.clear();
    seen.set(host, name);
    return name;
  };
  return (headers, method) => {
    const host = headers.host ?? "";
    const name = nameOf(host);
    if (name === undefined || !allowed(name)) {
      const shown = name ?? (host === "" ? "(none)" : JSON.stringify(host));
      return { status: 403, header: "host", code: "host_not_allowed", message: `Host ${shown} is not a name of this server — it answers only requests addressed to its own names (so a web page cannot reach it by DNS rebinding); if you reach it by this name, ${remedy(name ?? "NAME")}` };
    }
    if (headers.origin !== undefined) {
      const originName = originHost(headers.origin);
      if (originName === undefined || !allowed(originName)) {
        return { status: 403, header: "origin", code: "origin_not_allowed", message: `Origin ${headers.origin} is another site — a web page may not use this server; call it from a program (no Origin header), or if that page is yours, ${remedy(originName ?? "NAME")}` };
      }
    }
    const navigation = (method === "GET" || method === "HEAD") && headers["sec-fetch-mode"] === "navigate";
    if (headers["sec-fetch-site"] === "cross-site" && !navigation) {
      return { status: 403, header: "sec-fetch-site", code: "cross_site_request", message: "Sec-Fetch-Site: cross-site — a page of another site may not use this server; call it from a program, not from a web page" };
    }
    if (method === "POST" && !isJson(headers["content-type"])) {
      return { status: 415, header: "content-type", code: "unsupported_media_type", message: `Content-Type ${headers["content-type"] ?? "(none)"} is not JSON — send the body with Content-Type: application/json` };
    }
    return null;
  };
}

/** The test of a Host name against the server's names (see `hostGuard`). */
function allowedNames(boundHost: string, extra: readonly string[]): (name: string) => boolean {
  const bound = hostName(boundHost.includes(":") && !boundHost.startsWith("[") ? `[${boundHost}]` : boundHost);
  const names = new Set([...extra.map((h) => hostName(h)), bound].filter((n): n is string => n !== undefined));
  const everyAddress = bound === "0.0.0.0" || bound === "[::]";
  const local = bound !== undefined && (everyAddress || loopbackName(bound));
  return (name) => names.has(name) || (local && loopbackName(name)) || (everyAddress && isIpLiteral(name));
}

function loopbackName(name: string): boolean {
  return name === "localhost" || name === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/u.test(name);
}

function isIpLiteral(name: string): boolean {
  return name.startsWith("[") || /^\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3}$/u.test(name);
}

/** The host name of an Origin header (`http://evil.example:8080` → `evil.example`); undefined for `null` or junk. */
function originHost(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return url.protocol === "http:" || url.protocol === "https:" ? hostName(url.host) : undefined;
  } catch {
    return undefined;
  }
}

/** `application/json`, with or without parameters (`; charset=utf-8`). */
function isJson(contentType: string | undefined): boolean {
  return (contentType ?? "").split(";")[0]?.trim().toLowerCase() === "application/json";
}
