/**
 * A tenant: one client of a shared gateway, named by the operator beside its key (`REFLECT_GATEWAY_KEY=team-a:KEY`),
 * never by the key itself. It is part of every key a store is indexed by — a lesson, an episode, a replay pairing, a
 * quota are looked up under (tenant, key) — so another tenant's rows are not filtered out but never addressed.
 */

/** A tenant's name: 1–64 letters, digits or `._-`, starting with a letter or digit. */
export const TENANT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/u;

/**
 * The one tenant of a keyless gateway and of the AI SDK middleware, and the tenant whose rows were written before
 * tenants existed (lesson stores of schema version 1, records whose episodes name none): those are read as `local`'s.
 */
export const LOCAL_TENANT = "local";

/** Whether `name` is a tenant's name. */
export function isTenantName(name: unknown): name is string {
  return typeof name === "string" && TENANT_NAME.test(name);
}
