"""The usual Python harness style, for comparison with reflectkit's sandbox (bench/verifiers.mjs).

Shaped after HumanEval's `execution.py` / `evaluate_functional_correctness`: a long-lived Python parent, a thread
pool of `workers`, and for each program one `multiprocessing.Process` that `exec`s it with a time limit and its
output swallowed. No isolation beyond the process boundary (execution.py's `reliability_guard` only disables
functions; it is not a sandbox). Reads JSON lines {"id", "program"} on stdin, prints one JSON summary line.
Usage: python3 bench/exec-harness.py [workers] [timeout_seconds] < programs.jsonl
"""

import contextlib
import io
import json
import multiprocessing
import sys
import time
from concurrent.futures import ThreadPoolExecutor


def unsafe_execute(program: str, result) -> None:
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            exec(program, {"__name__": "__main__"})
        result.append("passed")
    except BaseException as error:  # noqa: BLE001 - a harness records every failure as the verdict
        result.append(f"failed: {type(error).__name__}")


def check(program: str, timeout: float) -> str:
    manager_result = multiprocessing.Manager().list()
    process = multiprocessing.Process(target=unsafe_execute, args=(program, manager_result))
    process.start()
    process.join(timeout=timeout + 1)
    if process.is_alive():
        process.kill()
    return manager_result[0] if manager_result else "timed out"


def main() -> None:
    workers = int(sys.argv[1]) if len(sys.argv) > 1 else 2
    timeout = float(sys.argv[2]) if len(sys.argv) > 2 else 3.0
    programs = [json.loads(line) for line in sys.stdin if line.strip()]
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(lambda p: check(p["program"], timeout), programs))
    seconds = time.perf_counter() - started
    print(json.dumps({"programs": len(programs), "passed": results.count("passed"), "seconds": seconds}))


if __name__ == "__main__":
    main()
