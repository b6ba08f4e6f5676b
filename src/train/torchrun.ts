import os from "node:os";
import { UsageError } from "../errors.js";

/**
 * The worker under PyTorch's launcher (`torchrun`): `nprocPerNode` ranks on this machine, and with `nnodes` > 1 the
 * same number on each of the other machines, which meet at `masterAddr:masterPort` (torchrun's static rendezvous).
 * Rank 0 (on the node with `nodeRank` 0) speaks the protocol; see worker/reflectkit_worker/distributed.py.
 */
export interface DistributedOptions {
  nprocPerNode: number;
  nnodes?: number;
  nodeRank?: number;
  masterAddr?: string;
  masterPort?: number;
}

/** Refuses a multi-node form that cannot meet, naming the flag to fix. */
export function checkDistributed(options: DistributedOptions): void {
  const nnodes = options.nnodes ?? 1;
  if (!Number.isInteger(options.nprocPerNode) || options.nprocPerNode < 1) throw new UsageError(`--nproc-per-node must be an integer ≥ 1, not ${options.nprocPerNode}`);
  if (!Number.isInteger(nnodes) || nnodes < 1) throw new UsageError(`--nnodes must be an integer ≥ 1, not ${nnodes}`);
  if (nnodes === 1) {
    if (options.nodeRank !== undefined && options.nodeRank !== 0) throw new UsageError(`--node-rank ${options.nodeRank} needs --nnodes > ${options.nodeRank}`);
    return;
  }
  const rank = options.nodeRank;
  if (rank === undefined || !Number.isInteger(rank) || rank < 0 || rank >= nnodes) throw new UsageError(`--nnodes ${nnodes} needs --node-rank between 0 and ${nnodes - 1} (this machine's place)`);
  if (options.masterAddr === undefined || options.masterAddr === "") throw new UsageError(`--nnodes ${nnodes} needs --master-addr: the host name or address of the machine with --node-rank 0, reachable from every node`);
  if (options.masterPort === undefined) throw new UsageError(`--nnodes ${nnodes} needs --master-port: a free TCP port on the --master-addr machine, the same on every node`);
}

/** The world size the options describe. */
export function worldSize(options: DistributedOptions | undefined): number {
  return options === undefined ? 1 : options.nprocPerNode * (options.nnodes ?? 1);
}

/**
 * The arguments after the venv's `python` (no PATH lookup of a `torchrun` script): the plain worker, or
 * `-m torch.distributed.run` with the launcher's flags and the worker as a module. One node uses torchrun's
 * `--standalone` rendezvous (a free local port); several use the static one at `masterAddr:masterPort`. No restarts:
 * a rank that fails ends the run, and the caller resumes it from its last checkpoint.
 */
export function workerArgs(options: DistributedOptions | undefined): string[] {
  if (options === undefined) return ["-m", "reflectkit_worker"];
  checkDistributed(options);
  const nnodes = options.nnodes ?? 1;
  const launcher = ["-m", "torch.distributed.run", "--nproc-per-node", String(options.nprocPerNode), "--max-restarts", "0"];
  if (nnodes === 1) launcher.push("--standalone");
  else launcher.push("--nnodes", String(nnodes), "--node-rank", String(options.nodeRank), "--master-addr", String(options.masterAddr), "--master-port", String(options.masterPort));
  return [...launcher, "-m", "reflectkit_worker"];
}

/** Torch threads per rank when none are asked for: this machine's cores shared among its ranks. */
export function threadsPerRank(options: DistributedOptions | undefined, threads: number | undefined): number | undefined {
  if (threads !== undefined || options === undefined) return threads;
  return Math.max(1, Math.floor(os.availableParallelism() / options.nprocPerNode));
}
