"""Runs a server command and ends its whole process group when the process that started it is gone.

`python -m reflectkit_worker.serve_guard -- COMMAND...`, started as the leader of a new process group. vLLM's API
server forks an engine process of its own; a parent killed outright (SIGKILL) runs no cleanup, so without this the
server and its engine would live on, holding the port and the CPU. The guard polls its parent id: when it changes (the
parent died and the guard was re-parented), or on SIGTERM/SIGINT, it sends SIGTERM to the group, waits for the
server, and then SIGKILLs whatever of the group is left, itself included. It exits with the server's status when the
server ends on its own.
"""

import os
import signal
import subprocess
import sys
import time

GRACE_SECONDS = 10.0


def end_group(child: subprocess.Popen) -> None:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        os.killpg(0, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + GRACE_SECONDS
    while child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    # The engine process may outlive the API server by a moment; what is left of the group goes now.
    time.sleep(0.5)
    os.killpg(0, signal.SIGKILL)


def main(argv: list) -> None:
    if argv[:1] == ["--"]:
        argv = argv[1:]
    if not argv:
        raise SystemExit("serve_guard: no command given")
    parent = os.getppid()
    child = subprocess.Popen(argv)
    stopping = []

    def on_signal(signum, frame):
        stopping.append(signum)

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    while True:
        code = child.poll()
        if code is not None:
            sys.exit(code)
        if stopping or os.getppid() != parent:
            end_group(child)
        time.sleep(0.25)


if __name__ == "__main__":
    main(sys.argv[1:])
