"""Training across processes: the worker under `torchrun` (torch.distributed; gloo on CPU, NCCL on CUDA).

Rank 0 speaks the JSON-lines protocol and broadcasts each request to the other ranks; every rank holds a full replica
of the model and its optimizer (data parallelism, as DDP). A batch's datums are split into contiguous shards, one per
rank, in rank order, so gathering the per-rank results in rank order gives the batch's order back.

Gradients are summed across ranks by a manual all-reduce (SUM) of the trainable parameters' gradients in optimStep,
not by wrapping the model in DistributedDataParallel: every loss here is a plain sum over datums whose normalisation
the caller puts in the weights or advantages (losses.py), so the summed gradient is exactly the single-process one,
whereas DDP averages (divides by the world size); gradients accumulate across forwardBackward calls until optimStep,
which DDP would all-reduce on every backward unless each call ran under no_sync; and a rank whose shard is empty (a
batch smaller than the world) must still join the reduction, which DDP can only do through a dummy forward pass.
One reduction per optimizer step is also the least traffic.

Outside torchrun (no WORLD_SIZE in the environment) the group is a single process and every helper is the identity."""

import contextlib
import datetime
import os
import sys
import threading
import time
import traceback

__all__ = ["Group", "GroupLost", "RankError"]


class GroupLost(Exception):
    """A collective failed: a rank died or the network broke. The run cannot go on; the worker exits (and torchrun
    with it), so TypeScript sees the end rather than waiting."""


@contextlib.contextmanager
def collective(what):
    try:
        yield
    except Exception as error:
        raise GroupLost(f"{what} across the ranks failed ({type(error).__name__}: {error}); a rank has died or lost its connection") from error


class RankError(Exception):
    """A request failed on some rank; raised on every rank, so all of them leave the request together."""

    def __init__(self, kind, message, trace):
        super().__init__(message)
        self.kind = kind
        self.trace = trace


class Group:
    def __init__(self, rank=0, world=1, local_rank=0):
        self.rank = rank
        self.world = world
        self.local_rank = local_rank
        self.control = None

    @staticmethod
    def from_env():
        world = int(os.environ.get("WORLD_SIZE", "1"))
        group = Group(int(os.environ.get("RANK", "0")), world, int(os.environ.get("LOCAL_RANK", "0")))
        if world > 1:
            group.start()
        return group

    def start(self):
        import torch
        import torch.distributed as dist

        watch_parent()
        if self.rank != 0:
            # stdout is rank 0's protocol channel (the ranks inherit torchrun's); anything another rank or a library
            # prints goes to stderr instead.
            os.dup2(2, 1)
            sys.stdout = sys.stderr
        # Idle ranks wait in a broadcast for the next request for as long as TypeScript takes between requests; a rank
        # that dies is torchrun's to notice (it stops the others and exits), not this timeout's.
        timeout = datetime.timedelta(seconds=float(os.environ.get("REFLECTKIT_DIST_TIMEOUT_S", 7 * 24 * 3600)))
        backend = "nccl" if torch.cuda.is_available() else "gloo"
        if backend == "nccl":
            torch.cuda.set_device(self.local_rank)
        dist.init_process_group(backend, timeout=timeout)
        # Requests and results are Python objects; they travel over gloo (CPU) whatever moves the gradients.
        self.control = dist.new_group(backend="gloo", timeout=timeout) if backend != "gloo" else dist.group.WORLD

    @property
    def distributed(self):
        return self.world > 1

    def describe(self):
        """Every rank's process id and host, for the ready line (and for tests that kill one rank)."""
        import socket

        mine = {"rank": self.rank, "pid": os.getpid(), "host": socket.gethostname()}
        return self.all_gather(mine)

    # --- requests --------------------------------------------------------------------------------------------------

    def broadcast(self, obj=None):
        """Rank 0 sends `obj`; every rank returns it."""
        if not self.distributed:
            return obj
        import torch.distributed as dist

        box = [obj]
        with collective("broadcasting a request"):
            dist.broadcast_object_list(box, src=0, group=self.control)
        return box[0]

    def all_gather(self, obj):
        if not self.distributed:
            return [obj]
        import torch.distributed as dist

        out = [None] * self.world
        with collective("gathering results"):
            dist.all_gather_object(out, obj, group=self.control)
        return out

    def everywhere(self, fn):
        """Runs `fn` on every rank and returns every rank's value, in rank order, on every rank; if it failed on any
        rank, raises that failure (the lowest such rank's) on every rank, so no rank waits in a later collective for
        one that left. Holds no collective inside `fn`."""
        if not self.distributed:
            return [fn()]
        try:
            outcome = ("ok", fn())
        except Exception as error:  # carried to every rank, raised there
            outcome = ("error", type(error).__name__, str(error), traceback.format_exc())
        outcomes = self.all_gather(outcome)
        for rank, o in enumerate(outcomes):
            if o[0] == "error":
                raise RankError(o[1], f"rank {rank} of {self.world}: {o[2]}", o[3])
        return [o[1] for o in outcomes]

    def shard(self, n):
        """This rank's contiguous slice [start, end) of n items: the first n % world ranks take one more."""
        base, extra = divmod(n, self.world)
        start = self.rank * base + min(self.rank, extra)
        return start, start + base + (1 if self.rank < extra else 0)

    # --- tensors ---------------------------------------------------------------------------------------------------

    def broadcast_tensors(self, tensors):
        """Overwrites every rank's tensors with rank 0's (after load and restore: all replicas start equal)."""
        if not self.distributed:
            return
        import torch.distributed as dist

        with collective("broadcasting weights"):
            for t in tensors:
                dist.broadcast(t.data, src=0)

    def summed_gradients(self, params):
        """Each parameter's gradient summed over the ranks (new tensors; the local ones are left alone), or None where
        no rank has one (as in one process, where AdamW then skips the parameter). A gradient only some ranks have
        (their shards reached it) counts as zero elsewhere. One all-reduce of the flattened gradients."""
        if not self.distributed:
            return [p.grad for p in params]
        import torch
        import torch.distributed as dist

        if not params:
            return []
        present = torch.tensor([p.grad is not None for p in params], dtype=torch.float32, device=params[0].device)
        with collective("summing gradients"):
            dist.all_reduce(present)
        reduced = [p for p, n in zip(params, present.tolist()) if n > 0]
        if not reduced:
            return [None] * len(params)
        flat = torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).reshape(-1) for p in reduced])
        with collective("summing gradients"):
            dist.all_reduce(flat)
        sums, offset = {}, 0
        for p in reduced:
            sums[id(p)] = flat[offset : offset + p.numel()].view_as(p).clone()
            offset += p.numel()
        return [sums.get(id(p)) for p in params]

    def sum_gradients(self, params):
        """Replaces every rank's gradients by their sum over the ranks; returns whether any rank had one."""
        sums = self.summed_gradients(params)
        if self.distributed:
            for p, g in zip(params, sums):
                p.grad = g
        return any(g is not None for g in sums)

    def close(self):
        if self.distributed:
            import torch.distributed as dist

            dist.destroy_process_group()


def watch_parent():
    """torchrun starts each rank in a session of its own, so a SIGKILL of torchrun (or of its process group) does not
    reach the ranks: each one leaves by itself within a second of its parent's death, rather than wait for ever."""
    parent = os.getppid()

    def watch():
        while True:
            time.sleep(1)
            if os.getppid() != parent:
                os._exit(1)

    threading.Thread(target=watch, daemon=True, name="reflectkit-parent-watch").start()
