import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { oracleInLoop, protocolLine, protocolOfConfig, runProtocol } from "./protocol.js";

describe("a run's protocol", () => {
  it("the default reflecting run has the oracle as its feedback, its stop and its choice, and says so in capitals", () => {
    const protocol = runProtocol({ strategy: "reflect-retry", stop: ["verified"] });
    assert.deepEqual([protocol.feedback, protocol.oracleFeedback, protocol.oracleStop, protocol.oracleSelection], ["oracle", true, true, true]);
    assert.match(protocolLine(protocol), /ORACLE IN THE LOOP/u);
  });

  it("a signal keeps the scorer out of the loop", () => {
    const protocol = runProtocol({ strategy: "reflexion", feedbackFrom: "shown-tests", stop: ["verified"], scorer: "every test" });
    assert.equal(oracleInLoop(protocol), false);
    assert.doesNotMatch(protocolLine(protocol), /ORACLE/u);
    assert.match(protocolLine(protocol), /feedback: shown-tests · stops on: the feedback · keeps: the best attempt by the feedback · scored after the fact by: every test/u);
  });

  it("with no stop condition the oracle still chose and told: in the loop, but not stopping", () => {
    const protocol = runProtocol({ strategy: "reflect-retry", stop: [] });
    assert.deepEqual([protocol.stop, protocol.oracleStop, oracleInLoop(protocol)], ["turn limit", false, true]);
  });

  it("self-refine with an LLM critic and debate read no scorer; a cascade's verifier does", () => {
    assert.equal(oracleInLoop(runProtocol({ strategy: "self-refine", critics: ["judge:m"], stop: ["verified"] })), false);
    assert.equal(oracleInLoop(runProtocol({ strategy: "self-refine", critics: ["verifier"], stop: ["verified"] })), true);
    assert.equal(runProtocol({ strategy: "debate", stop: [] }).selection, "vote");
    assert.equal(runProtocol({ strategy: "cascade", critics: ["judge:m"], stop: ["verified"] }).feedback, "oracle, then judge:m");
    assert.equal(runProtocol({ strategy: "cascade", feedbackFrom: "self-check", critics: ["judge:m"], stop: ["verified"] }).feedback, "self-check, then judge:m");
  });

  it("resampling: the model is told nothing; the feedback only stops and chooses, so the line says best-of-k by the feedback", () => {
    const oracle = runProtocol({ strategy: "reflect-retry", stop: [], reflection: "resample" });
    assert.deepEqual([oracle.resample, oracle.oracleFeedback, oracle.oracleStop, oracle.oracleSelection, oracleInLoop(oracle)], [true, false, false, true, true]);
    const line = protocolLine(oracle);
    assert.match(line, /^protocol · resampling: attempts after the first are fresh samples of the task prompt, shown no feedback · checked by: the scorer itself \(oracle\) · stops on: the turn limit only · keeps: the best sample by the scorer \(oracle\) \(best-of-k selected by the feedback\)/u);
    assert.match(line, /ORACLE IN THE LOOP: the scorer chose which sample to keep, so Acc@t after turn 1 is best-of-k by the truth \(pass@k\), not the model's answer accuracy/u);
    const signal = runProtocol({ strategy: "reflexion", feedbackFrom: "self-check", stop: ["verified"], reflection: "resample" });
    assert.equal(oracleInLoop(signal), false);
    assert.match(protocolLine(signal), /checked by: self-check · stops on: the feedback · keeps: the best sample by the feedback \(best-of-k selected by the feedback\)/u);
    assert.equal(runProtocol({ strategy: "reflect-retry", stop: ["verified"], reflection: "placebo" }).resample, undefined, "only resample changes the protocol");
    assert.equal(protocolOfConfig({ strategy: "reflect-retry", stop_when: "verified", reflection_mode: "resample" }).resample, true);
  });

  it("a run folder written before protocols were stated reads as the oracle run it was", () => {
    const legacy = protocolOfConfig({ strategy: "reflexion", stop_when: "verified", critic: [] });
    assert.equal(legacy.feedback, "oracle");
    assert.equal(oracleInLoop(legacy), true);
    const stated = runProtocol({ strategy: "reflexion", feedbackFrom: "shown-tests", stop: ["verified"] });
    assert.deepEqual(protocolOfConfig({ protocol: stated }), stated);
    assert.equal(protocolOfConfig({ strategy: "reflect-retry", feedback_from: "self-check", stop_when: "none" }).stop, "turn limit");
  });
});
