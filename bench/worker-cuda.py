"""The training worker on CUDA against the same worker on CPU: one run of each over the JSON-lines protocol, on a tiny
random Llama with SmolLM2's tokenizer (no model weights need to travel). Checks that the numbers agree within float
tolerance and that a checkpoint saved on CUDA restores on the CPU. Prints one JSON report; exits 1 when a check fails.

Needs a machine with CUDA and the worker's requirements (worker/requirements.txt); run from the repository root:
    PYTHONPATH=worker python3 bench/worker-cuda.py TOKENIZER   (a .gguf file or a Hugging Face tokenizer folder)
"""

import json
import math
import os
import subprocess
import sys
import tempfile
import time


class Worker:
    def __init__(self, device):
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        self.device = device
        self.proc = subprocess.Popen([sys.executable, "-m", "reflectkit_worker"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
        self.ready = json.loads(self.proc.stdout.readline())["ready"]
        self.next_id = 0

    def __call__(self, method, **params):
        self.next_id += 1
        self.proc.stdin.write(json.dumps({"id": self.next_id, "method": method, "params": params}) + "\n")
        self.proc.stdin.flush()
        reply = json.loads(self.proc.stdout.readline())
        if "error" in reply:
            raise RuntimeError(f"{self.device} {method}: {reply['error']['message']}")
        return reply["result"]

    def close(self):
        self("shutdown")
        self.proc.wait(timeout=60)


def max_abs(a, b):
    return max(abs(x - y) for row_a, row_b in zip(a, b) for x, y in zip(row_a, row_b))


def speed(tokenizer):
    """Training and sampling speed of the worker on CUDA for a SmolLM2-135M-sized random Llama (30 layers, width 576,
    9 heads, MLP 1536; full multi-head attention, so ~20M more parameters than SmolLM2's grouped-query attention) with
    the RRR benchmark's LoRA (r16 on every linear layer) and step shape: 16 sequences of ~150 tokens (4 failures × G=4),
    and 16 samples of up to 128 tokens."""
    w = Worker("cuda")
    try:
        tiny = {"tokenizer": tokenizer, "layers": 30, "hidden": 576, "heads": 9, "intermediate": 1536}
        w("load", kind="tiny", path="", tiny=tiny, lora={"rank": 16, "alpha": 32, "dropout": 0}, seed=1, dtype="float32", device="cuda")
        datums = [{"tokens": [(7 * i + 13 * j) % 40000 + 100 for j in range(150)], "weights": [0.0] * 90 + [1.0 / 60] * 60} for i in range(16)]
        steps = []
        for _ in range(6):
            t0 = time.perf_counter()
            result = w("forwardBackward", datums=datums, loss={"kind": "cross_entropy"})
            w("optimStep", lr=1e-4)
            steps.append(time.perf_counter() - t0)
        samples = []
        for seed in range(3):
            t0 = time.perf_counter()
            out = w("sample", prompts=[d["tokens"][:60] for d in datums[:4]], n=4, maxTokens=128, temperature=1.0, seed=seed)["samples"]
            samples.append((time.perf_counter() - t0, sum(len(x["tokens"]) for group in out for x in group)))
        median = sorted(steps[1:])[2]  # the first step warms up CUDA
        sample_seconds, sample_tokens = sorted(samples)[1]
        return {"train_step_seconds_median": median, "train_tokens_per_second": result["tokens"] / median, "tokens_per_step": result["tokens"], "sample_seconds_median": sample_seconds, "sampled_tokens": sample_tokens}
    finally:
        w.close()


def main(tokenizer):
    tiny = {"tokenizer": tokenizer, "layers": 4, "hidden": 256, "heads": 4, "intermediate": 512}
    load = {"kind": "tiny", "path": "", "tiny": tiny, "lora": {"rank": 8, "alpha": 16, "dropout": 0}, "seed": 7, "dtype": "float32"}
    conversations = [
        [{"role": "user", "content": f"What is {a} + {b}?"}, {"role": "assistant", "content": f"{a} + {b} = {a + b}."}]
        for a, b in [(2, 3), (17, 25), (6, 6), (9, 8)]
    ]
    report, checks = {}, []

    def check(name, ok, **detail):
        checks.append({"check": name, "ok": bool(ok), **detail})

    workers = {d: Worker(d) for d in ("cpu", "cuda")}
    try:
        report["cuda_available"] = workers["cuda"].ready["cuda"]
        check("CUDA is visible to the worker", report["cuda_available"])
        loaded = {d: w("load", **load, device=d) for d, w in workers.items()}
        report["device"] = {d: loaded[d]["device"] for d in loaded}
        check("the cuda worker put the model on CUDA", loaded["cuda"]["device"].startswith("cuda"), device=loaded["cuda"]["device"])
        rendered = workers["cpu"]("renderChat", conversations=conversations, addGenerationPrompt=False)["rendered"]
        datums = []
        for r in rendered:
            weights = [0.0] * len(r["tokens"])
            answer = r["spans"][1]  # the assistant message
            for i in range(answer["start"], answer["end"]):
                weights[i] = 1.0
            datums.append({"tokens": r["tokens"], "weights": weights})
        results = {}
        for d, w in workers.items():
            before = w("logprobs", datums=[{"tokens": x["tokens"]} for x in datums])["logprobs"]
            losses = []
            for _ in range(3):
                losses.append(w("forwardBackward", datums=datums, loss={"kind": "cross_entropy"})["loss"])
                w("optimStep", lr=1e-2)
            after = w("logprobs", datums=[{"tokens": x["tokens"]} for x in datums])["logprobs"]
            # Policy gradient on the trained weights, on-policy: the ratio is 1, so the loss is -mean(advantage·1).
            old = w("logprobs", datums=[{"tokens": x["tokens"]} for x in datums])["logprobs"]
            pg = [{"tokens": x["tokens"], "weights": x["weights"], "advantages": [a * (1 if i % 2 == 0 else -1) for a in x["weights"]], "logprobs": lp} for i, (x, lp) in enumerate(zip(datums, old))]
            pg_loss = w("forwardBackward", datums=pg, loss={"kind": "policy_gradient", "clip": 0.2})["loss"]
            w("zeroGrad")
            prompt = workers["cpu"]("renderChat", conversations=[conversations[0][:1]], addGenerationPrompt=True)["rendered"][0]["tokens"]
            greedy = w("sample", prompts=[prompt], n=1, maxTokens=12, temperature=0)["samples"][0][0]["tokens"]
            results[d] = {"before": before, "losses": losses, "after": after, "pg_loss": pg_loss, "greedy": greedy}
        cpu, cuda = results["cpu"], results["cuda"]
        check("log-probs of the initial weights agree", max_abs(cpu["before"], cuda["before"]) < 1e-4, max_abs=max_abs(cpu["before"], cuda["before"]))
        check("cross-entropy losses agree over 3 steps", all(math.isclose(a, b, rel_tol=1e-4, abs_tol=1e-5) for a, b in zip(cpu["losses"], cuda["losses"])), cpu=cpu["losses"], cuda=cuda["losses"])
        # Adam's first steps move each weight by about ±lr whatever its gradient's size, so where a gradient is near
        # zero its sign, and so the step, follows float rounding, which differs between the devices: the runs drift
        # apart a little. The check is that the drift is small beside what training moved (measured: 0.002 of 2.7).
        moved, drift = max_abs(cpu["after"], cpu["before"]), max_abs(cpu["after"], cuda["after"])
        check("training moved the weights the same way (drift under 1% of the movement)", moved > 1e-2 and drift < 0.01 * moved, drift=drift, moved=moved)
        check("policy-gradient losses agree", math.isclose(cpu["pg_loss"], cuda["pg_loss"], rel_tol=1e-3, abs_tol=1e-5), cpu=cpu["pg_loss"], cuda=cuda["pg_loss"])
        check("greedy samples agree", cpu["greedy"] == cuda["greedy"], cpu=cpu["greedy"], cuda=cuda["greedy"])
        # A checkpoint written on CUDA restores in the CPU worker: same log-probs.
        with tempfile.TemporaryDirectory() as folder:
            ckpt = os.path.join(folder, "step-3")
            workers["cuda"]("save", path=ckpt)
            fresh = Worker("cpu")
            try:
                fresh("load", **load, device="cpu")
                fresh("restore", path=ckpt)
                restored = fresh("logprobs", datums=[{"tokens": x["tokens"]} for x in datums])["logprobs"]
                fresh("forwardBackward", datums=datums, loss={"kind": "cross_entropy"})
                fresh("optimStep", lr=1e-2)  # the restored AdamW state is usable on the CPU
            finally:
                fresh.close()
            check("a CUDA checkpoint restores on the CPU", max_abs(restored, cuda["after"]) < 1e-4, max_abs=max_abs(restored, cuda["after"]))
    finally:
        for w in workers.values():
            w.close()
    report["speed"] = speed(tokenizer)
    report["checks"] = checks
    report["passed"] = all(c["ok"] for c in checks)
    print(json.dumps(report, indent=2))
    return 0 if report["passed"] else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1]))
