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

  it("a run folder written before protocols were stated reads as the oracle run it was", () => {
    const legacy = protocolOfConfig({ strategy: "reflexion", stop_when: "verified", critic: [] });
    assert.equal(legacy.feedback, "oracle");
    assert.equal(oracleInLoop(legacy), true);
    const stated = runProtocol({ strategy: "reflexion", feedbackFrom: "shown-tests", stop: ["verified"] });
    assert.deepEqual(protocolOfConfig({ protocol: stated }), stated);
    assert.equal(protocolOfConfig({ strategy: "reflect-retry", feedback_from: "self-check", stop_when: "none" }).stop, "turn limit");
  });
});
