"""TextWorldExpress games: one process serving many trials, JSON lines on stdin/stdout.

argv: the folders holding the unpacked textworld_express and py4j wheels (run with python3 -I). The program starts
one JVM on the package's jar through py4j (an auth token on its local port, no callback server) and gives each trial
a game interface of its own in that JVM.
Requests: {"id", "op": "seeds"|"reset"|"act"|"verdict"|"gold"|"close"|"jvm", ...}; answers: {"id", "ok", ...}.
"seeds", "reset" and "gold" name a split ("train" or "test"; absent: "test"); a seed outside it is refused.
A model's text reaches the game only as the command string of a step; nothing of it is evaluated.
The process ends when its standard input closes (the parent went away), even while a request is stuck in the JVM,
and takes the JVM with it; the JVM also ends by itself when this process dies (py4j's --die-on-broken-pipe).
"""
import glob
import json
import os
import sys
import threading
import queue

TWX_FOLDER, PY4J_FOLDER = sys.argv[1], sys.argv[2]
sys.path.insert(0, PY4J_FOLDER)

from py4j.java_gateway import GatewayParameters, JavaGateway, launch_gateway  # noqa: E402

# TextWorldExpress's own Python environment ends a game after this many steps (`envStepLimit`).
STEP_LIMIT = 100


def start_jvm():
    jar = os.path.join(TWX_FOLDER, "textworld_express", "textworld-express.jar")
    py4j_jar = next(iter(glob.glob(os.path.join(PY4J_FOLDER, "py4j-*.data", "data", "share", "py4j", "py4j*.jar"))), "")
    try:
        port, token, proc = launch_gateway(
            jarpath=py4j_jar,
            classpath=jar,
            javaopts=["-Xmx1g", "-XX:+UseSerialGC"],
            die_on_exit=True,
            enable_auth=True,
            cwd=os.path.dirname(jar),
            return_proc=True,
        )
    except FileNotFoundError:
        sys.stderr.write("TextWorldExpress needs Java 17 or later: no `java` on PATH (install openjdk-17-jre-headless, or set JAVA_HOME)\n")
        sys.exit(3)
    gateway = JavaGateway(gateway_parameters=GatewayParameters(port=port, auth_token=token, auto_field=True), java_process=proc)
    return gateway, proc


# The splits a record may name: the jar's fold names. The dev split is not offered (nothing tunes on it).
SPLITS = {"train": "getSeedsTrain", "test": "getSeedsTest"}


def split_of(msg):
    """The request's split, refused unless it is one of SPLITS (a request without one is the test split)."""
    split = msg.get("split", "test")
    if not isinstance(split, str) or split not in SPLITS:
        raise ValueError(f"unknown split {str(split)[:100]!r}: one of {', '.join(SPLITS)}")
    return split


class Trial:
    def __init__(self, game, split, seed):
        self.game = game
        self.split = split
        self.seed = seed
        self.moves = 0
        self.score = 0.0
        self.success = False
        self.failure = False
        self.last = ""

    @property
    def over(self):
        return self.success or self.failure or self.moves >= STEP_LIMIT


def interface(gateway, game, params):
    """A fresh game interface with `game` loaded under `params`; the jar's own message on a bad name or parameter."""
    server = gateway.jvm.textworldexpress.runtime.PythonInterface()
    message = server.load(game, params)
    if message:
        raise ValueError(message.strip())
    return server


class Environment:
    def __init__(self, gateway, proc):
        self.gateway = gateway
        self.proc = proc
        self.trials = {}
        self.split_seeds = {}

    def split(self, server, game, split):
        """A split's seeds of the game, as the jar lists them (read once per game and split: each element is a call into
        the JVM)."""
        if (game, split) not in self.split_seeds:
            self.split_seeds[(game, split)] = list(getattr(server, SPLITS[split])())
        return self.split_seeds[(game, split)]

    def checked_seed(self, server, msg, split):
        """The request's seed, refused unless the jar lists it in the split (the jar itself generates a game of any seed
        under any fold name)."""
        seed = msg["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or seed not in set(self.split(server, msg["game"], split)):
            raise ValueError(f"seed {str(seed)[:100]} is not in {msg['game']}'s {split} split")
        return seed

    def seeds(self, msg):
        split = split_of(msg)
        server = interface(self.gateway, msg["game"], msg["params"])
        return {"seeds": self.split(server, msg["game"], split)}

    def reset(self, msg):
        split = split_of(msg)
        server = interface(self.gateway, msg["game"], msg["params"])
        seed = self.checked_seed(server, msg, split)
        infos = json.loads(server.generateNewGameJSON(seed, split, False))
        trial = Trial(msg["game"], split, seed)
        trial.last = infos["observation"]
        self.trials[msg["trial"]] = (trial, server)
        return {"task": server.getTaskDescription(), "observation": infos["observation"], "validActions": list(infos["validActions"])}

    def act(self, msg):
        trial, server = self.trials[msg["trial"]]
        command = msg["command"]
        if not isinstance(command, str):
            raise ValueError("a command must be a string")
        # A lone surrogate (valid in JSON, not in UTF-8) would fail the call into the JVM; it becomes "?".
        command = command.encode("utf-8", "replace").decode("utf-8")
        if trial.over:
            return {"over": True, "refused": True, "observation": "The game is over; no action is taken.", "validActions": []}
        infos = json.loads(server.stepJSON(command))
        trial.moves += 1
        trial.score = float(infos["score"])
        trial.success = bool(infos["tasksuccess"]) or trial.score >= 1.0
        trial.failure = bool(infos["taskfailure"])
        trial.last = infos["observation"]
        return {
            "over": trial.over,
            "refused": False,
            "observation": infos["observation"],
            "validActions": [] if trial.over else list(infos["validActions"]),
            "score": trial.score,
            "success": trial.success,
            "failure": trial.failure,
        }

    def verdict(self, msg):
        trial, _ = self.trials[msg["trial"]]
        return {"success": trial.success, "failure": trial.failure, "score": trial.score, "moves": trial.moves, "limit": STEP_LIMIT, "last": trial.last}

    def gold(self, msg):
        """The game's gold action sequence, from a game of its own generated with the same seed."""
        split = split_of(msg)
        server = interface(self.gateway, msg["game"], msg["params"])
        server.generateNewGameJSON(self.checked_seed(server, msg, split), split, True)
        return {"actions": list(server.getGoldActionSequence())}

    def close(self, msg):
        entry = self.trials.pop(msg["trial"], None)
        if entry is not None:
            self.gateway.detach(entry[1])
        return {}

    def jvm(self, msg):
        return {"pid": self.proc.pid}


def watch_input(lines, proc):
    """Reads the requests; when the input closes, stops the JVM and ends the process at once."""
    for line in sys.stdin:
        lines.put(line)
    try:
        proc.kill()
    finally:
        os._exit(0)


def main():
    gateway, proc = start_jvm()
    env = Environment(gateway, proc)
    ops = {"seeds": env.seeds, "reset": env.reset, "act": env.act, "verdict": env.verdict, "gold": env.gold, "close": env.close, "jvm": env.jvm}
    lines = queue.Queue()
    threading.Thread(target=watch_input, args=(lines, proc), daemon=True).start()
    while True:
        line = lines.get()
        msg = None
        try:
            msg = json.loads(line)
            answer = ops[msg["op"]](msg)
            answer.update({"id": msg["id"], "ok": True})
        except Exception as e:
            answer = {"id": None if not isinstance(msg, dict) else msg.get("id"), "ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
        if proc.poll() is not None:
            sys.stderr.write(f"the JVM exited ({proc.returncode})\n")
            sys.stderr.flush()
            os._exit(4)


if __name__ == "__main__":
    main()
