"""BFCL multi-turn environments: one process serving many trials, JSON lines on stdin/stdout.

argv: the folders holding the unpacked bfcl-eval and mpmath wheels (inserted into sys.path; run with python3 -I).
Requests: {"id", "op": "reset"|"act"|"next"|"verdict"|"gold"|"close", "trial", ...}; answers: {"id", "ok", ...}.
A model's call runs as getattr(instance, name)(**arguments) on the trial's own instances, and only when its name is a
documented function of the entry's involved classes that the trial offers; nothing of a model's text is evaluated.
The ground truth's call strings (from the package) run through the package's own executor, and the verdict is the
package's multi-turn check (state check of every involved instance after each user turn, then the response check).
"""
import ast
import copy
import inspect
import json
import sys

for folder in sys.argv[1:]:
    sys.path.insert(0, folder)

from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING, STATELESS_CLASSES  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils  # noqa: E402
from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import response_checker, state_checker  # noqa: E402
import importlib  # noqa: E402

# The package's executor refuses these names before it evaluates a call; a model's call is refused alike.
REFUSED = {"kill", "exit", "quit", "remove", "unlink", "popen", "Popen", "run"}

trials = {}


def instances_of(entry):
    long_context = "long_context" in entry["category"] or "composite" in entry["category"]
    out = {}
    for class_name in entry["involved_classes"]:
        module = importlib.import_module(CLASS_FILE_PATH_MAPPING[class_name])
        instance = getattr(module, class_name)()
        if class_name not in STATELESS_CLASSES:
            instance._load_scenario(copy.deepcopy(entry["initial_config"].get(class_name, {})), long_context=long_context)
        out[class_name] = instance
    return out


def show(result):
    """A result as the package's executor shows it."""
    if type(result) == str:
        return result
    if type(result) == dict:
        try:
            return json.dumps(result)
        except Exception:
            return str(result)
    return str(result)


def reset(msg):
    entry = msg["entry"]
    trial = {
        "entry": entry,
        "gold": msg["ground_truth"],
        "instances": instances_of(entry),
        "model_name": "reflectkit_" + str(msg["trial"]),
        "turn": 0,
        "turn_calls": [0],
        "results": [],
        "checked": 0,
        "failure": None,
    }
    trials[msg["trial"]] = trial
    return {}


def call(trial, name, arguments, offered):
    if not isinstance(name, str) or name not in offered or name.startswith("_") or name in REFUSED:
        return f"Error during execution: no function named {name!r} is offered", True
    if not isinstance(arguments, dict):
        return "Error during execution: the arguments must be a JSON object", True
    owner = next((i for i in trial["instances"].values() if callable(getattr(type(i), name, None))), None)
    if owner is None:
        return f"Error during execution: no function named {name!r} is offered", True
    try:
        return show(getattr(owner, name)(**arguments)), False
    except Exception as e:  # the backend's own error, as the package shows it
        return f"Error during execution: {str(e)}", True


def act(msg):
    trial = trials[msg["trial"]]
    offered = set(msg["offered"])
    out = []
    for c in msg["calls"]:
        try:  # read in Python, so a float written 50.0 stays a float as the package's handlers read it
            arguments = json.loads(c.get("arguments") or "{}")
        except (ValueError, TypeError) as e:
            arguments = e
        if isinstance(arguments, Exception):
            content, is_error = f"Error during execution: the arguments are not JSON ({arguments})", True
        else:
            content, is_error = call(trial, c.get("name"), arguments, offered)
        trial["results"].append(content)
        trial["turn_calls"][-1] += 1
        out.append({"content": content, "isError": is_error})
    return {"observations": out}


def check_turn(trial, index):
    """The package's check of one user turn, the model's state as it stands at the turn's end."""
    entry = trial["entry"]
    gold = trial["gold"][index] if index < len(trial["gold"]) else []
    gold_results, gold_instances = multi_turn_utils.execute_multi_turn_func_call(
        func_call_list=gold,
        initial_config=entry["initial_config"],
        involved_classes=entry["involved_classes"],
        model_name=trial["model_name"] + "_ground_truth",
        test_entry_id=entry["id"],
        long_context="long_context" in entry["category"] or "composite" in entry["category"],
        is_evaL_run=True,
    )
    if trial["failure"] is not None or len(gold) == 0:
        return
    if trial["turn_calls"][index] == 0:
        trial["failure"] = {"error_type": "multi_turn:empty_turn_model_response", "error_message": f"Model response list is empty for turn {index}"}
        return
    state = state_checker(trial["instances"], gold_instances)
    if not state["valid"]:
        trial["failure"] = {"error_type": state["error_type"], "error_message": state["error_message"], "differences": repr(state["details"]["differences"])[:2000]}
        return
    response = response_checker(trial["results"], gold_results, index)
    if not response["valid"]:
        trial["failure"] = {"error_type": response["error_type"], "error_message": response["error_message"], "missing": repr(response["details"]["missing_items"])[:2000]}


def next_turn(msg):
    trial = trials[msg["trial"]]
    check_turn(trial, trial["turn"])
    trial["checked"] = trial["turn"] + 1
    trial["turn"] += 1
    trial["turn_calls"].append(0)
    return {}


def verdict(msg):
    trial = trials[msg["trial"]]
    while trial["checked"] < len(trial["gold"]) and trial["checked"] <= trial["turn"]:
        check_turn(trial, trial["checked"])
        trial["checked"] += 1
    failure = trial["failure"]
    return {"valid": failure is None and trial["checked"] >= len(trial["gold"]), "failure": failure, "turns": trial["checked"]}


def gold(msg):
    """The ground truth as named-argument calls (the package's strings, read with ast, never evaluated)."""
    trial = trials[msg["trial"]]
    out = []
    for turn in trial["gold"]:
        calls = []
        for text in turn:
            node = ast.parse(text, mode="eval").body
            name = node.func.id
            owner = next(i for i in trial["instances"].values() if callable(getattr(type(i), name, None)))
            args = [ast.literal_eval(a) for a in node.args]
            kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords}
            bound = inspect.signature(getattr(owner, name)).bind_partial(*args, **kwargs)
            calls.append({"name": name, "arguments": json.dumps(dict(bound.arguments))})
        out.append(calls)
    return {"turns": out}


def close(msg):
    trial = trials.pop(msg["trial"], None)
    if trial is not None:
        prefix = (trial["model_name"] + "_ground_truth_eval_").replace("-", "_")
        for key in [k for k in vars(multi_turn_utils) if k.startswith(prefix)]:
            del vars(multi_turn_utils)[key]
    return {}


OPS = {"reset": reset, "act": act, "next": next_turn, "verdict": verdict, "gold": gold, "close": close}


def main():
    for line in sys.stdin:
        msg = None
        try:
            msg = json.loads(line)
            answer = OPS[msg["op"]](msg)
            answer.update({"id": msg["id"], "ok": True})
        except Exception as e:
            answer = {"id": None if not isinstance(msg, dict) else msg.get("id"), "ok": False, "error": f"{type(e).__name__}: {e}"}
        sys.stdout.write(json.dumps(answer, default=str) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
