import { WIRE_SOURCE } from "./wire-source.js";

/**
 * The candidate's side of code grading (see judge-source.ts for the whole design), the main program of the
 * candidate's own sandbox. It reads `{before, program, candidateLine}` from stdin, runs `before` and then the
 * program in one namespace (`__name__` is "solution"), says on the link (fd 5) `("ready",)` or
 * `("compile-error" | "program-error", error)`, and then serves the judge's requests until the link closes:
 *
 *   ("resolve", name)  ("call", handle, args, kwargs)  ("get", handle, name)  ("set", handle, name, value)  ("repr", handle)
 *
 * answering `("ok", value, changed)` — `changed` lists `(i, value)` for each list, dict, set or bytearray argument,
 * as it is after the call — or `("raise", type, message, line, text)`. Nothing here is trusted: the program can
 * rewrite any of it, which changes only what the judge receives, and the judge checks that.
 */
export const CANDIDATE_SOURCE = String.raw`
import builtins, io, json, os, sys, traceback
${WIRE_SOURCE}

def _main():
    exit_now, LINK = os._exit, 5
    payload = json.loads(sys.stdin.read())
    sys.stdin.close()
    sys.stdin = io.StringIO("")
    try:
        os.close(3)  # the judge's report channel: not this process's to write
    except OSError:
        pass
    program, first = payload["program"], payload["candidateLine"]
    lines = program.split("\n")
    objects, ids = {}, {}

    def handle_id(value):
        key = id(value)
        if key not in ids:
            ids[key] = len(objects)
            objects[len(objects)] = value
        return ids[key]

    def handle_obj(number):
        if number not in objects:
            raise WireError("no object %d" % number)
        return objects[number]

    wire, unwire, send, receive = make_codec(handle_id, handle_obj)

    def clip(text, limit=300):
        text = str(text)
        return text if len(text) <= limit else text[:limit] + "…"

    def error(exc, line=None):
        try:
            message = clip(exc.msg if isinstance(exc, SyntaxError) and line is not None else exc)
        except BaseException:
            message = "(unprintable message)"
        if line is None:
            for frame in traceback.extract_tb(exc.__traceback__):
                if frame.filename == "<solution>":
                    line = frame.lineno
        if line is None or line < first or line > len(lines):
            return (type(exc).__name__, message, None, None)
        return (type(exc).__name__, message, line - first + 1, clip(lines[line - 1].strip(), 200))

    namespace = {"__name__": "solution", "__builtins__": builtins}
    try:
        exec(compile(payload["before"], "<setup>", "exec"), namespace)
    except BaseException as exc:
        send(LINK, ("program-error", error(exc)))
        exit_now(0)
    try:
        code = compile(program, "<solution>", "exec")
    except BaseException as exc:
        send(LINK, ("compile-error", error(exc, getattr(exc, "lineno", None) if isinstance(exc, SyntaxError) else None)))
        exit_now(0)
    try:
        exec(code, namespace)
    except BaseException as exc:
        send(LINK, ("program-error", error(exc)))
        exit_now(0)
    send(LINK, ("ready",))

    MUTABLE = (list, dict, set, bytearray)
    while True:
        try:
            request = receive(LINK)
        except BaseException:
            exit_now(0)
        changed = []
        try:
            kind = request[0]
            if kind == "resolve":
                if request[1] not in namespace:
                    raise NameError("name %r is not defined" % request[1])
                value = namespace[request[1]]
            elif kind == "call":
                args, kwargs = unwire(request[2]), unwire(request[3])
                value = handle_obj(request[1])(*args, **kwargs)
                changed = [(index, wire(arg)) for index, arg in enumerate(args) if type(arg) in MUTABLE]
            elif kind == "get":
                value = getattr(handle_obj(request[1]), request[2])
            elif kind == "set":
                setattr(handle_obj(request[1]), request[2], unwire(request[3]))
                value = None
            elif kind == "repr":
                value = clip(repr(handle_obj(request[1])))
            else:
                raise WireError("unknown request %r" % kind)
            reply = ("ok", wire(value), changed)
        except BaseException as exc:
            reply = ("raise",) + error(exc)
        try:
            send(LINK, reply)
        except (ValueError, TypeError, WireError, RecursionError, MemoryError) as exc:
            send(LINK, ("raise", "ValueError", clip("the value your code returned cannot be sent to the judge: %s" % exc), None, None))

_main()
`;
