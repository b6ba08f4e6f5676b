import type * as AjvDraft07 from "ajv";
import type * as Ajv2019 from "ajv/dist/2019.js";
import type * as Ajv2020 from "ajv/dist/2020.js";
import type AjvFormats from "ajv-formats";
import { requireOptional } from "../../util/optional-package.js";

const FEATURE = "JSON Schema validation (JSON tasks, request checks, data exports)";

/**
 * Ajv, its 2019-09 and 2020-12 builds and ajv-formats, loaded by the first schema compiled rather than when
 * reflectkit is imported: Ajv and its code generator are among the larger modules a run may never need.
 */
export function ajvModules() {
  return {
    draft07: requireOptional<typeof AjvDraft07>("ajv", FEATURE),
    draft2019: requireOptional<typeof Ajv2019>("ajv/dist/2019.js", FEATURE),
    draft2020: requireOptional<typeof Ajv2020>("ajv/dist/2020.js", FEATURE),
    formats: requireOptional<typeof AjvFormats>("ajv-formats", FEATURE),
  };
}
