/**
 * `reflectkit/testing`: what a test of your own Task, Critic or strategy needs. A scripted model that returns the
 * replies it is given and records every request, and the conformance suites every built-in Task and Critic passes,
 * each registered with one call as `node:test` tests. It loads `node:test`, so import it from test files only; the
 * root entry never loads it.
 */
export { scriptedModel, type ScriptedModel, type ScriptedReply, type ScriptedTurn } from "../models/scripted.js";
export { arbitraryOutputs, testTaskConformance, type ConformanceCase, type ConformanceSpec } from "../tasks/conformance.js";
export { checkProblems, conformanceContext, criticInjections, testCriticConformance, type CriticConformanceSpec } from "../critics/conformance.js";
