// The code harness as it was before the two-process judge (one sandbox, the program and the tests in one namespace), kept only
// so bench/verifiers.mjs and bench/reference-judge.mjs can compare the two-process judge against it. Not for use.
import { randomBytes } from "node:crypto";

/**
 * The Python side of code grading, run inside the sandbox as its main program. It reads one JSON payload from
 * stdin — `{nonce, before, program, candidateLine, after, tests: [{source, shown}]}` — and reports events as lines
 * `<nonce> <json>` on file descriptor 3, which the model's code never learns the nonce for (stdout and stderr stay
 * the program's own, so printing cannot forge a result):
 *
 *   {"event": "bad-input", "stage", "type", "message"}   trusted code (setup or a test) does not compile
 *   {"event": "compile-error", "type", "message", "line", "text"}
 *   {"event": "start", "stage": "program" | "test", "index"?}
 *   {"event": "program-error" | "setup-error", ...error}
 *   {"event": "fail", "index", ...error, "testLine"}     the first failing test only; later tests still run
 *   {"event": "value", "index", "value"}                 for a shown `assert X == Y` that failed: repr of X
 *   {"event": "done", "passed", "total"}
 *
 * An error is `{type, message, line, text}`, where `line` counts from the start of the model's code (null when the
 * error was not raised in it) and `text` is that source line. Everything runs in one namespace, as MBPP's and
 * HumanEval's own harnesses do; `__name__` is "solution", so the model's `if __name__ == "__main__":` demos do not
 * run. The process ends with `os._exit`, skipping atexit hooks and stray threads of the model's code.
 *
 * Limitation (as in the upstream harnesses): the model's code shares the process, so code written to attack this
 * harness (walking the interpreter's memory for the nonce, or returning an object whose `__eq__` is always true)
 * can fake a pass. The sandbox bounds what such code can do; it cannot make the grade unforgeable.
 */
const HARNESS_SOURCE = String.raw`
import ast, io, json, os, reprlib, sys, traceback

def _main():
    write, dumps, exit_now = os.write, json.dumps, os._exit
    payload = json.loads(sys.stdin.read())
    sys.stdin.close()
    sys.stdin = io.StringIO("")
    nonce = payload["nonce"]
    program = payload["program"]
    first = payload["candidateLine"]
    lines = program.split("\n")
    tests = payload["tests"]

    def send(event):
        try:
            write(3, (nonce + " " + dumps(event) + "\n").encode("utf-8", "replace"))
        except BaseException:
            pass

    def clip(text, limit=300):
        text = str(text)
        return text if len(text) <= limit else text[:limit] + "…"

    def located(line):
        if line is None or line < first or line > len(lines):
            return None, None
        return line - first + 1, clip(lines[line - 1].strip(), 200)

    def describe(exc, line=None):
        try:
            message = str(exc)
        except BaseException:
            message = "(unprintable message)"
        if line is None:
            for frame in traceback.extract_tb(exc.__traceback__):
                if frame.filename == "<solution>":
                    line = frame.lineno
        at, text = located(line)
        return {"type": type(exc).__name__, "message": clip(message), "line": at, "text": text}

    def test_line(exc, index, source):
        found = None
        for frame in traceback.extract_tb(exc.__traceback__):
            if frame.filename == "<test %d>" % index:
                found = frame.lineno
        source_lines = source.split("\n")
        if found is None or not 0 < found <= len(source_lines):
            return None
        return clip(source_lines[found - 1].strip(), 300)

    def left_value(source, namespace):
        try:
            tree = ast.parse(source)
            if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Assert):
                return None
            test = tree.body[0].test
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
                return None
            value = eval(compile(ast.Expression(test.left), "<value>", "eval"), namespace)
            shown = reprlib.Repr()
            shown.maxstring = shown.maxother = 200
            shown.maxlist = shown.maxtuple = shown.maxset = shown.maxdict = 20
            return clip(shown.repr(value), 300)
        except BaseException:
            return None

    trusted = []
    try:
        for stage, source in (("test-import", payload["before"]), ("setup", payload["after"])):
            trusted.append(compile(source, "<setup>", "exec"))
        compiled_tests = []
        for index, test in enumerate(tests):
            stage = "test %d" % (index + 1)
            compiled_tests.append(compile(test["source"], "<test %d>" % index, "exec"))
    except BaseException as exc:
        message = exc.msg if isinstance(exc, SyntaxError) else exc
        send({"event": "bad-input", "stage": stage, "type": type(exc).__name__, "message": clip(message)})
        exit_now(0)

    namespace = {"__name__": "solution", "__builtins__": __builtins__}
    try:
        exec(trusted[0], namespace)
    except BaseException as exc:
        send(dict(describe(exc), event="setup-error", stage="before"))
        exit_now(0)
    try:
        code = compile(program, "<solution>", "exec")
    except BaseException as exc:
        line = getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None
        event = dict(describe(exc, line), event="compile-error")
        if isinstance(exc, SyntaxError):
            event["message"] = clip(exc.msg)
        send(event)
        exit_now(0)
    send({"event": "start", "stage": "program"})
    try:
        exec(code, namespace)
    except BaseException as exc:
        send(dict(describe(exc), event="program-error"))
        exit_now(0)
    try:
        exec(trusted[1], namespace)
    except BaseException as exc:
        send(dict(describe(exc), event="setup-error", stage="after"))
        exit_now(0)

    passed = 0
    failed = False
    for index, test in enumerate(tests):
        send({"event": "start", "stage": "test", "index": index})
        try:
            exec(compiled_tests[index], namespace)
            passed += 1
        except BaseException as exc:
            if failed:
                continue
            failed = True
            send(dict(describe(exc), event="fail", index=index, testLine=test_line(exc, index, test["source"])))
            if test["shown"] and isinstance(exc, AssertionError):
                value = left_value(test["source"], namespace)
                if value is not None:
                    send({"event": "value", "index": index, "value": value})
    send({"event": "done", "passed": passed, "total": len(tests)})
    exit_now(0)

_main()
`;

/** True when the old harness passes `spec` (a CodeTestSpec): a "done" event and no "fail". */
export async function oldHarnessPasses(sandbox, spec, limits = {}) {
  const nonce = randomBytes(16).toString("hex");
  const payload = JSON.stringify({ nonce, before: spec.before, program: spec.program, candidateLine: spec.candidateLine, after: spec.after, tests: spec.tests });
  const result = await sandbox.run(HARNESS_SOURCE, { ...limits, stdin: payload });
  const events = [];
  for (const line of result.report.split("\n")) {
    if (!line.startsWith(`${nonce} `)) continue;
    try {
      events.push(JSON.parse(line.slice(nonce.length + 1)));
    } catch {
      // a line cut at the report cap
    }
  }
  return events.some((e) => e.event === "done") && !events.some((e) => e.event === "fail");
}
