import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { UsageError } from "../errors.js";
import { checkDistributed, threadsPerRank, workerArgs, worldSize } from "./torchrun.js";

describe("the worker's command line under torchrun", () => {
  test("one process without options; torchrun's standalone rendezvous on one node; the static one across nodes", () => {
    assert.deepEqual(workerArgs(undefined), ["-m", "reflectkit_worker"]);
    assert.deepEqual(workerArgs({ nprocPerNode: 2 }), ["-m", "torch.distributed.run", "--nproc-per-node", "2", "--max-restarts", "0", "--standalone", "-m", "reflectkit_worker"]);
    assert.deepEqual(workerArgs({ nprocPerNode: 8, nnodes: 2, nodeRank: 1, masterAddr: "10.0.0.1", masterPort: 29500 }), [
      "-m", "torch.distributed.run", "--nproc-per-node", "8", "--max-restarts", "0",
      "--nnodes", "2", "--node-rank", "1", "--master-addr", "10.0.0.1", "--master-port", "29500",
      "-m", "reflectkit_worker",
    ]);
    assert.equal(worldSize({ nprocPerNode: 8, nnodes: 2 }), 16);
    assert.equal(worldSize(undefined), 1);
  });

  test("a form that cannot meet is refused, naming the flag", () => {
    const refused = (options: Parameters<typeof checkDistributed>[0], flag: RegExp) => assert.throws(() => checkDistributed(options), (e: unknown) => e instanceof UsageError && flag.test(e.message));
    refused({ nprocPerNode: 0 }, /--nproc-per-node/);
    refused({ nprocPerNode: 2, nnodes: 2, masterAddr: "h", masterPort: 1 }, /--node-rank/);
    refused({ nprocPerNode: 2, nnodes: 2, nodeRank: 2, masterAddr: "h", masterPort: 1 }, /--node-rank between 0 and 1/);
    refused({ nprocPerNode: 2, nnodes: 2, nodeRank: 0, masterPort: 1 }, /--master-addr/);
    refused({ nprocPerNode: 2, nnodes: 2, nodeRank: 0, masterAddr: "h" }, /--master-port/);
    refused({ nprocPerNode: 2, nodeRank: 1 }, /--nnodes/);
  });

  test("threads per rank: as asked, or the cores shared among the ranks, at least one", () => {
    assert.equal(threadsPerRank(undefined, undefined), undefined);
    assert.equal(threadsPerRank({ nprocPerNode: 2 }, 3), 3);
    assert.equal(threadsPerRank({ nprocPerNode: 1_000 }, undefined), 1);
  });
});
