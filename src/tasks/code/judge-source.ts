import { WIRE_SOURCE } from "./wire-source.js";

/**
 * The judge's side of code grading: the trusted process, run in its own sandbox beside the candidate's
 * (candidate-source.ts) — a separate bubblewrap invocation, so separate namespaces: the candidate cannot see,
 * signal, trace or read the memory of this process, and nothing it does reaches the report but through the
 * values it returns.
 *
 * This process runs only trusted code: `before` (MBPP's test imports, also run before the program in the
 * candidate), `judgeSetup` (HumanEval's prompt, so its helpers such as `encode_cyclic` or `poly` are the trusted
 * ones), `after` (MBPP's test setup) and the tests. A free name they use that this namespace does not define and
 * that is neither a builtin nor a standard-library module is resolved in the candidate (`fromProgram` names, such as
 * HumanEval's entry point, always are): a plain value crosses as a value, anything else (a function, a class, an
 * instance) as a proxy whose calls, attribute reads and writes are requests on the link (fd 5), and whose `==` and
 * hash are identity only, never delegated. Results cross as plain builtin data (wire-source.ts), decoded strictly,
 * so the asserts, tolerances and loops run here on values the candidate cannot rig, and the expected values never
 * enter the candidate's process. An exception the candidate raises crosses as (type name, message, line in the
 * model's code) and is raised here as the builtin exception of that name when there is one.
 *
 * Guaranteed: whatever the candidate's program does — rewrite builtins, write anything on any descriptor, walk
 * frames, `gc` or /proc, return objects with a rigged `__eq__`, exit, kill, fork, flood, sleep — it cannot reach
 * this process, its tests or its expected values, cannot forge the report, and cannot make a comparison lie; a
 * wrong program gets a failure or "cannot judge", never a pass. Not guaranteed: a test that only checks
 * truthiness (`assert f(x)`) passes any truthy value, as in the upstream harnesses; a list, dict, set or bytearray
 * argument the candidate changes in place is copied back into the test's object, as Python would, so a test that
 * derives its expected value from an object it has passed to the candidate sees the change. A test that hands the
 * candidate something that cannot cross (a function, an instance of a class the test defines) is not run: it is
 * "cannot judge" — the candidate's process never runs a test.
 *
 * Input on stdin: `{before, judgeSetup, after, fromProgram, tests: [{source, shown}]}`. Output on fd 3: frames
 * `<length>:<json>\n` (ASCII, `length` counts the JSON's bytes), each event with `seq` counting from 0:
 *
 *   {"event": "bad-input", "stage", "type", "message"}   trusted code does not compile or does not run
 *   {"event": "compile-error" | "program-error", type, message, line, text}   as the candidate said
 *   {"event": "setup-error", "stage": "before" | "after", ...error}
 *   {"event": "start", "stage": "program" | "test", "index"?}
 *   {"event": "fail", "index", ...error, "testLine"}     the first failing test only; later tests still run
 *   {"event": "value", "index", "value"}                 for a shown `assert X == Y` (or `abs(X - Y) < tol`) that failed: repr of X
 *   {"event": "result", "index", "status": "pass" | "fail" | "unsplit", "reason"?}   one per test, in order
 *   {"event": "lost"}                                    the candidate's process ended or closed the link
 *   {"event": "done", "passed", "total"}
 *
 * The process ends with `os._exit(0)` right after its last event.
 */
export const JUDGE_SOURCE = String.raw`
import ast, builtins, json, os, reprlib, sys, traceback
${WIRE_SOURCE}

class Lost(BaseException):
    """The candidate's process ended or closed the link."""

class Broken(BaseException):
    """The candidate's process answered with something that breaks the protocol."""

class Unsplittable(BaseException):
    """A test hands the candidate something that cannot cross."""

class CandidateError(Exception):
    """An exception raised in the candidate whose type is no builtin exception."""


def _main():
    write, dumps, exit_now, LINK = os.write, json.dumps, os._exit, 5
    payload = json.loads(sys.stdin.read())
    tests = payload["tests"]
    seq = [0]
    state = {"lost": False, "broken": None, "unsplit": None, "resolving": False}

    def send(event):
        event["seq"] = seq[0]
        seq[0] += 1
        data = dumps(event, ensure_ascii=True)
        frame = ("%d:%s\n" % (len(data), data)).encode("ascii")
        while frame:
            frame = frame[write(3, frame):]

    def clip(text, limit=300):
        text = str(text)
        return text if len(text) <= limit else text[:limit] + "…"

    remotes = {}

    def handle_id(value):
        if type(value) is Remote:
            return object.__getattribute__(value, "_rid")
        what = "a function" if callable(value) else "an object of type %s" % type(value).__name__
        state["unsplit"] = "it passes %s to your code, and only plain data can cross to your program's process" % what
        raise Unsplittable(state["unsplit"])

    def handle_obj(number):
        if number not in remotes:
            remotes[number] = Remote(number)
        return remotes[number]

    wire, unwire, send_link, receive_link = make_codec(handle_id, handle_obj)

    def as_error(type_name, message, line, text):
        if type(type_name) is not str or type(message) is not str or (line is not None and type(line) is not int) or (text is not None and type(text) is not str):
            raise WireError("a malformed error")
        return {"type": clip(type_name, 100), "message": clip(message), "line": line, "text": None if text is None else clip(text, 200)}

    def request(message):
        if state["lost"]:
            raise Lost()
        if state["broken"] is not None:
            raise Broken(state["broken"])
        try:
            send_link(LINK, message)
            reply = receive_link(LINK)
        except (EOFError, OSError):
            state["lost"] = True
            raise Lost() from None
        except (WireError, ValueError, TypeError, MemoryError, RecursionError) as exc:
            state["broken"] = "your program's process broke the link to the judge (%s)" % clip(exc, 100)
            raise Broken(state["broken"]) from None
        try:
            if reply[0] == "ok" and len(reply) == 3:
                return unwire(reply[1]), reply[2]
            if reply[0] == "raise" and len(reply) == 5:
                error = as_error(*reply[1:])
            else:
                raise WireError("an unknown reply")
        except (WireError, ValueError, TypeError, MemoryError, RecursionError) as exc:
            state["broken"] = "your program's process sent a reply the judge cannot read (%s)" % clip(exc, 100)
            raise Broken(state["broken"]) from None
        raise remote_exception(error)

    def remote_exception(error):
        kind = getattr(builtins, error["type"], None)
        exc = None
        if isinstance(kind, type) and issubclass(kind, Exception) and not issubclass(kind, (Lost, Broken, Unsplittable)):
            try:
                exc = kind(error["message"])
            except BaseException:
                exc = None
        if exc is None:
            exc = CandidateError(error["message"])
        exc._candidate = error
        return exc

    def call(rid, args, kwargs):
        value, changed = request(("call", rid, wire(list(args)), wire(dict(kwargs))))
        try:
            if type(changed) is not list:
                raise WireError("a malformed reply")
            for entry in changed:
                if type(entry) is not tuple or len(entry) != 2 or type(entry[0]) is not int or not 0 <= entry[0] < len(args):
                    raise WireError("a malformed reply")
                target, after = args[entry[0]], unwire(entry[1])
                if type(target) is not type(after) or target == after:
                    continue
                if type(target) in (list, bytearray):
                    target[:] = after
                else:
                    target.clear()
                    target.update(after)
        except (WireError, ValueError, TypeError, MemoryError, RecursionError) as exc:
            state["broken"] = "your program's process sent a reply the judge cannot read (%s)" % clip(exc, 100)
            raise Broken(state["broken"]) from None
        return value

    class Remote:
        """An object that lives in the candidate's process. Equal only to itself; hashed by identity."""
        __slots__ = ("_rid",)

        def __init__(self, rid):
            object.__setattr__(self, "_rid", rid)

        def __call__(self, *args, **kwargs):
            return call(object.__getattribute__(self, "_rid"), args, kwargs)

        def __getattr__(self, name):
            if name.startswith("__") and name.endswith("__"):
                raise AttributeError(name)
            return request(("get", object.__getattribute__(self, "_rid"), name))[0]

        def __setattr__(self, name, value):
            request(("set", object.__getattribute__(self, "_rid"), name, wire(value)))

        def __eq__(self, other):
            return self is other

        def __ne__(self, other):
            return self is not other

        __hash__ = object.__hash__

        def __repr__(self):
            text = request(("repr", object.__getattribute__(self, "_rid")))[0]
            return clip(text) if type(text) is str else "<object>"

    from_program = frozenset(payload["fromProgram"])
    builtin_names = frozenset(vars(builtins)) - from_program
    stdlib = frozenset(sys.stdlib_module_names) - from_program

    class Namespace(dict):
        """Globals that resolve a missing name: builtins first, then standard-library modules (trusted, imported
        here), then the candidate's program; a fromProgram name always from the program."""
        __slots__ = ()

        def __missing__(self, name):
            if not state["resolving"] or type(name) is not str or name in builtin_names:
                raise KeyError(name)
            if name in stdlib:
                module = __import__(name)
                self[name] = module
                return module
            value = request(("resolve", name))[0]
            if type(value) is Remote:
                self[name] = value
            return value

    def describe(exc):
        remote = getattr(exc, "_candidate", None)
        if type(remote) is dict:
            return dict(remote)
        try:
            message = clip(exc)
        except BaseException:
            message = "(unprintable message)"
        return {"type": type(exc).__name__, "message": message, "line": None, "text": None}

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
            if not (isinstance(test, ast.Compare) and len(test.ops) == 1):
                return None
            left = test.left
            if isinstance(test.ops[0], ast.Lt) and isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "abs" and len(left.args) == 1 and not left.keywords and isinstance(left.args[0], ast.BinOp) and isinstance(left.args[0].op, ast.Sub):
                left = left.args[0].left  # a tolerance, abs(X - Y) < tol: X
            elif not isinstance(test.ops[0], ast.Eq):
                return None
            value = eval(compile(ast.Expression(left), "<value>", "eval"), namespace)
            shown = reprlib.Repr()
            shown.maxstring = shown.maxother = 200
            shown.maxlist = shown.maxtuple = shown.maxset = shown.maxdict = 20
            return clip(shown.repr(value), 300)
        except BaseException:
            return None

    stage = "setup"
    try:
        trusted = {}
        for stage in ("before", "judgeSetup", "after"):
            trusted[stage] = compile(payload[stage], "<setup>", "exec")
        compiled_tests = []
        for index, test in enumerate(tests):
            stage = "test %d" % (index + 1)
            compiled_tests.append(compile(test["source"], "<test %d>" % index, "exec"))
    except BaseException as exc:
        message = exc.msg if isinstance(exc, SyntaxError) else exc
        send({"event": "bad-input", "stage": stage, "type": type(exc).__name__, "message": clip(message)})
        exit_now(0)

    namespace = Namespace(__name__="solution", __builtins__=builtins)
    try:
        exec(trusted["before"], namespace)
    except BaseException as exc:
        send(dict(describe(exc), event="setup-error", stage="before"))
        exit_now(0)
    try:
        exec(trusted["judgeSetup"], namespace)
    except BaseException as exc:
        send({"event": "bad-input", "stage": "setup", "type": type(exc).__name__, "message": clip(exc)})
        exit_now(0)
    for name in payload["fromProgram"]:
        namespace.pop(name, None)

    send({"event": "start", "stage": "program"})
    try:
        hello = receive_link(LINK)
        if hello[0] in ("compile-error", "program-error") and len(hello) == 2 and type(hello[1]) is tuple and len(hello[1]) == 4:
            send(dict(as_error(*hello[1]), event=hello[0]))
            exit_now(0)
        if hello != ("ready",):
            raise WireError("an unknown greeting")
    except (EOFError, OSError):
        send({"event": "lost"})
        exit_now(0)
    except (WireError, ValueError, TypeError, MemoryError, RecursionError) as exc:
        send({"event": "program-error", "type": "BrokenLink", "message": "your program's process broke the link to the judge (%s)" % clip(exc, 100), "line": None, "text": None})
        exit_now(0)

    state["resolving"] = True
    try:
        exec(trusted["after"], namespace)
    except Lost:
        send({"event": "lost"})
        exit_now(0)
    except BaseException as exc:
        send(dict(describe(exc), event="setup-error", stage="after"))
        exit_now(0)
    if state["lost"] or state["broken"] is not None or state["unsplit"] is not None:
        send({"event": "setup-error", "stage": "after", "type": "BrokenLink", "message": state["broken"] or state["unsplit"] or "lost", "line": None, "text": None})
        exit_now(0)

    passed = 0
    failed = False
    for index, test in enumerate(tests):
        send({"event": "start", "stage": "test", "index": index})
        state["unsplit"] = None
        error = None
        try:
            exec(compiled_tests[index], namespace)
        except BaseException as exc:
            error = exc
        # A test that catches the judge's own exceptions still does not pass.
        if state["lost"]:
            send({"event": "lost"})
            exit_now(0)
        if state["unsplit"] is not None:
            send({"event": "result", "index": index, "status": "unsplit", "reason": state["unsplit"]})
            continue
        if error is None and state["broken"] is not None:
            error = Broken(state["broken"])
        if error is None:
            passed += 1
            send({"event": "result", "index": index, "status": "pass"})
            continue
        if not failed:
            failed = True
            event = dict(describe(error), event="fail", index=index, testLine=test_line(error, index, test["source"]))
            if isinstance(error, Broken):
                event.update(type="BrokenLink", message=clip(error))
            send(event)
            if test["shown"] and isinstance(error, AssertionError):
                value = left_value(test["source"], namespace)
                if state["lost"]:
                    send({"event": "result", "index": index, "status": "fail"})
                    send({"event": "lost"})
                    exit_now(0)
                if value is not None:
                    send({"event": "value", "index": index, "value": value})
        send({"event": "result", "index": index, "status": "fail"})
    send({"event": "done", "passed": passed, "total": len(tests)})
    exit_now(0)

_main()
`;
