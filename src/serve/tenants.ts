/**
 * The gateway's tenants: each client key is a tenant, named by the operator beside the key, never by the key itself.
 *
 * `REFLECT_GATEWAY_KEY=team-a:KEY1,team-b:KEY2` (or a keys file, one `NAME:KEY` a line) names two tenants. A key given
 * without a name is still a tenant of its own: the only key of a gateway is `local`'s (the tenant of a keyless
 * gateway, and of everything written before tenants existed), and each of several unnamed keys is named after its
 * digest (`key-` and 12 hex digits of its sha-256), which says nothing a client could use. A key holding `:` must be
 * given with its name (`NAME:KEY`), as the part before the first `:` is read as a name whenever it is one.
 *
 * Isolation is by default: lessons, episodes, replay pairings and quotas are looked up under (tenant, key), so two
 * tenants share nothing. Several keys given one name are one tenant (a key being rotated: the old and the new).
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { InputError, UsageError } from "../errors.js";
import { LOCAL_TENANT, TENANT_NAME } from "../core/tenant.js";

/** A client key and the tenant it is. */
export interface TenantKey {
  tenant: string;
  key: string;
}

/** Longest client key read (a longer one is a pasted file, not a key). */
const MAX_KEY_CHARS = 4096;

/** The tenant an unnamed key is when it is one of several: named after its digest. */
export function digestTenant(key: string): string {
  return `key-${createHash("sha256").update(key, "utf8").digest("hex").slice(0, 12)}`;
}

/** One `NAME:KEY` (or bare `KEY`) entry; `name` undefined for a bare key. Throws a message (no key in it). */
function parseEntry(entry: string): { name?: string; key: string } {
  const colon = entry.indexOf(":");
  const name = colon < 0 ? undefined : entry.slice(0, colon).trim();
  const parsed = name !== undefined && TENANT_NAME.test(name) ? { name, key: entry.slice(colon + 1).trim() } : { key: entry.trim() };
  if (parsed.key === "") throw new Error(`the tenant ${JSON.stringify(parsed.name ?? "")} has an empty key — write NAME:KEY`);
  if (/\s/u.test(parsed.key)) throw new Error("a key holds a space or a line break — keys are one word; write NAME:KEY");
  if (parsed.key.length > MAX_KEY_CHARS) throw new Error(`a key is longer than ${MAX_KEY_CHARS} characters`);
  return parsed;
}

/** The entries, named: bare keys get `local` (the only key) or their digest's name (one of several). */
function named(entries: readonly { name?: string; key: string }[]): TenantKey[] {
  const bare = entries.filter((e) => e.name === undefined).length;
  return entries.map((e) => ({ tenant: e.name ?? (entries.length === 1 && bare === 1 ? LOCAL_TENANT : digestTenant(e.key)), key: e.key }));
}

/**
 * Refuses one key given twice (the message names the tenants, never the key). One name given to several keys is one
 * tenant with several keys — a key being rotated, or one application's two services.
 */
function checkDistinct(keys: readonly TenantKey[], where: (index: number) => string): void {
  const seen = new Map<string, number>();
  keys.forEach(({ tenant, key }, i) => {
    const earlier = seen.get(key);
    if (earlier !== undefined) throw new UsageError(`${where(i)}: the same key is given twice (tenants ${keys[earlier]?.tenant} and ${tenant}) — a key is one tenant's`);
    seen.set(key, i);
  });
}

/**
 * The tenants of `REFLECT_GATEWAY_KEY`: comma-separated `NAME:KEY` (or bare `KEY`) entries; an empty value is a
 * keyless gateway (no tenants but `local`). Throws a UsageError naming the variable and the entry, never the key.
 */
export function parseGatewayKeys(value: string, variable = "REFLECT_GATEWAY_KEY"): TenantKey[] {
  const raw = value.split(",").map((e) => e.trim());
  const entries = raw.flatMap((entry, i) => {
    if (entry === "") return [];
    try {
      return [parseEntry(entry)];
    } catch (error) {
      throw new UsageError(`${variable}, entry ${i + 1}: ${(error as Error).message}`);
    }
  });
  const keys = named(entries);
  checkDistinct(keys, (i) => `${variable}, entry ${i + 1}`);
  return keys;
}

/**
 * The tenants of a keys file (`--keys FILE`): one `NAME:KEY` a line (`#` starts a comment line, blank lines are
 * skipped). A bad line is an InputError naming the file and line, never the key.
 */
export function readKeysFile(file: string): TenantKey[] {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    throw new InputError(`cannot read the keys file (${(error as NodeJS.ErrnoException).code ?? (error as Error).message}) — pass a file of NAME:KEY lines`, file, undefined, { cause: error });
  }
  const lines: { line: number; name?: string; key: string }[] = [];
  text.split(/\r?\n/u).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    let entry: { name?: string; key: string };
    try {
      entry = parseEntry(line);
    } catch (error) {
      throw new InputError((error as Error).message, file, i + 1);
    }
    if (entry.name === undefined) throw new InputError("a line of a keys file is NAME:KEY — name the tenant (1–64 letters, digits or ._- starting with a letter or digit)", file, i + 1);
    lines.push({ line: i + 1, ...entry });
  });
  const keys = lines.map((l) => ({ tenant: l.name as string, key: l.key }));
  try {
    checkDistinct(keys, (i) => `line ${lines[i]?.line}`);
  } catch (error) {
    throw new InputError((error as Error).message, file);
  }
  return keys;
}

/** The tenants of the gateway's `apiKey` option: keys in code are bare keys, named as `parseGatewayKeys` names them. */
export function tenantsOfKeys(apiKey: string | readonly string[] | undefined): TenantKey[] {
  const keys = (typeof apiKey === "string" ? [apiKey] : (apiKey ?? [])).filter((k) => k !== "");
  const tenants = named(keys.map((key) => ({ key })));
  checkDistinct(tenants, (i) => `apiKey ${i + 1}`);
  return tenants;
}
