import type Database from "better-sqlite3";
import { requireOptional } from "../util/optional-package.js";

/**
 * The better-sqlite3 driver, loaded by the first store opened on a SQLite file rather than when reflectkit is
 * imported (its native addon costs start-up time that a run without lessons never needs back).
 */
export function sqliteDriver(): typeof Database {
  return requireOptional<typeof Database>("better-sqlite3", "a SQLite lesson store");
}
