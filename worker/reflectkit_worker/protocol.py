"""The JSON-lines protocol: one request per line in, one reply per line out, in order.

Request: {"id": int, "method": str, "params": {...}}
Reply:   {"id": int, "result": {...}} or {"id": int, "error": {"type": str, "message": str, "traceback": str}}
The first line the worker writes is {"ready": {...}}. Logs go to stderr; stdout carries only the protocol.

Under torchrun only rank 0 reads requests and writes replies: it broadcasts each request that needs every rank (see
Session.RANK0_ONLY for those that do not) and the other ranks follow it (distributed.py).
"""

import json
import sys
import traceback

from . import PROTOCOL_VERSION
from .distributed import Group, GroupLost, RankError
from .session import Session, WorkerError


def serve(stdin, stdout) -> int:
    group = Group.from_env()
    session = Session(group)
    ranks = group.describe()
    if group.rank != 0:
        return follow(session, group)
    write(stdout, {"ready": {**session.hello(), "worldSize": group.world, "ranks": ranks}})
    for raw in stdin:
        raw = raw.strip()
        if not raw:
            continue
        request_id = None
        try:
            request = json.loads(raw)
            request_id = request.get("id")
            method = request["method"]
            params = request.get("params", {})
            if method == "shutdown":
                group.broadcast({"method": "shutdown"})
                write(stdout, {"id": request_id, "result": {}})
                group.close()
                return 0
            handler = session.methods().get(method)
            if handler is None:
                raise WorkerError(f"unknown method {method!r}; this worker speaks protocol {PROTOCOL_VERSION}")
            if method not in Session.RANK0_ONLY:
                group.broadcast({"method": method, "params": params})
            result = handler(**params)
            write(stdout, {"id": request_id, "result": result})
        except GroupLost as error:
            write(stdout, {"id": request_id, "error": describe(error)})
            return 1
        except Exception as error:  # every failure becomes a reply; the worker stays up
            write(stdout, {"id": request_id, "error": describe(error)})
    # stdin closed (TypeScript went away): the other ranks leave too.
    group.broadcast({"method": "shutdown"})
    group.close()
    return 0


def follow(session, group) -> int:
    """Ranks other than 0: run each broadcast request; rank 0 reports the outcome (failures reach it through
    Group.everywhere), so a failure here is only logged."""
    while True:
        request = group.broadcast()
        if request["method"] == "shutdown":
            group.close()
            return 0
        try:
            session.methods()[request["method"]](**request["params"])
        except GroupLost:
            raise
        except RankError:
            pass  # the same failure is raised on rank 0, which replies with it
        except Exception:
            print(f"rank {group.rank}: {request['method']} failed:\n{traceback.format_exc()}", file=sys.stderr, flush=True)


def describe(error) -> dict:
    if isinstance(error, RankError):
        return {"type": error.kind, "message": str(error), "traceback": error.trace}
    kind = "WorkerError" if isinstance(error, WorkerError) else type(error).__name__
    return {"type": kind, "message": str(error), "traceback": traceback.format_exc()}


def write(stdout, message) -> None:
    stdout.write(json.dumps(message, allow_nan=False) + "\n")
    stdout.flush()


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout))
