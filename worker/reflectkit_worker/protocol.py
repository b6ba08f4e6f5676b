"""The JSON-lines protocol: one request per line in, one reply per line out, in order.

Request: {"id": int, "method": str, "params": {...}}
Reply:   {"id": int, "result": {...}} or {"id": int, "error": {"type": str, "message": str, "traceback": str}}
The first line the worker writes is {"ready": {...}}. Logs go to stderr; stdout carries only the protocol.
"""

import json
import sys
import traceback

from . import PROTOCOL_VERSION
from .session import Session, WorkerError


def serve(stdin, stdout) -> int:
    session = Session()
    write(stdout, {"ready": session.hello()})
    for raw in stdin:
        raw = raw.strip()
        if not raw:
            continue
        request_id = None
        try:
            request = json.loads(raw)
            request_id = request.get("id")
            method = request["method"]
            if method == "shutdown":
                write(stdout, {"id": request_id, "result": {}})
                return 0
            handler = session.methods().get(method)
            if handler is None:
                raise WorkerError(f"unknown method {method!r}; this worker speaks protocol {PROTOCOL_VERSION}")
            result = handler(**request.get("params", {}))
            write(stdout, {"id": request_id, "result": result})
        except Exception as error:  # every failure becomes a reply; the worker stays up
            kind = "WorkerError" if isinstance(error, WorkerError) else type(error).__name__
            write(stdout, {"id": request_id, "error": {"type": kind, "message": str(error), "traceback": traceback.format_exc()}})
    return 0


def write(stdout, message) -> None:
    stdout.write(json.dumps(message, allow_nan=False) + "\n")
    stdout.flush()


if __name__ == "__main__":
    sys.exit(serve(sys.stdin, sys.stdout))
