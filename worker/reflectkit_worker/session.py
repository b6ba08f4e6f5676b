"""One worker session: a model, its tokenizer and its optimizer, driven by protocol methods (Tinker's primitives:
forwardBackward, optimStep, sample, logprobs, save). Gradients accumulate across forwardBackward calls until
optimStep applies and clears them.

Under torchrun (distributed.py) every rank runs the requests rank 0 broadcasts, on a full replica: forwardBackward and
logprobs on the rank's shard of the datums, with the results gathered in datum order; optimStep on the gradients summed
over the ranks; save on rank 0 alone; restore on rank 0, whose weights and optimizer state then go to the others.
The text methods, sample, exportGguf and exportLora run on rank 0 only (RANK0_ONLY), generation included."""

import contextlib
import dataclasses
import json
import math
import os
import platform

from . import PROTOCOL_VERSION
from .export import DTYPES
from .distributed import Group
from .model import LoadConfig, WorkerError, load_model, pick_device

__all__ = ["Session", "WorkerError"]


class Session:
    # Not broadcast under torchrun: they need no other rank (generation runs on rank 0's replica).
    RANK0_ONLY = frozenset({"renderChat", "tokenize", "decode", "sample", "exportGguf", "exportLora", "exportPeft"})

    def __init__(self, group=None):
        self.group = group or Group()
        self.model = None
        self.tokenizer = None
        self.config = None
        self.optimizer = None
        self.steps = 0

    def methods(self):
        return {
            "load": self.load,
            "renderChat": self.render_chat,
            "tokenize": self.tokenize,
            "decode": self.decode,
            "forwardBackward": self.forward_backward,
            "optimStep": self.optim_step,
            "logprobs": self.logprobs,
            "sample": self.sample,
            "save": self.save,
            "restore": self.restore,
            "exportGguf": self.export_gguf,
            "exportLora": self.export_lora,
            "exportPeft": self.export_peft,
            "parameters": self.parameters,
            "zeroGrad": self.zero_grad,
        }

    def hello(self):
        import torch
        import transformers

        return {
            "protocolVersion": PROTOCOL_VERSION,
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "cuda": torch.cuda.is_available(),
        }

    # --- model -------------------------------------------------------------------------------------------------

    def load(self, **params):
        import torch

        def local():
            self.config = LoadConfig.from_params(params)
            self.model, self.tokenizer = load_model(self.config)
            self.optimizer, self.steps = None, 0
            return {
                "device": str(next(self.model.parameters()).device),
                "parameters": sum(p.numel() for p in self.model.parameters()),
                "trainableParameters": sum(p.numel() for p in self.model.parameters() if p.requires_grad),
                "vocabSize": len(self.tokenizer),
                "eosTokenIds": self.stop_token_ids(),
                "hasChatTemplate": self.tokenizer.chat_template is not None,
                "threads": torch.get_num_threads(),
            }

        info = self.group.everywhere(local)[0]
        # The same seed gives every rank the same initial weights already; rank 0's are copied anyway, as DDP does.
        self.group.broadcast_tensors(self.trainable())
        return {**info, "worldSize": self.group.world}

    def trainable(self):
        return [p for p in self.require_model().parameters() if p.requires_grad]

    def require_model(self):
        if self.model is None:
            raise WorkerError("no model loaded: call load first")
        return self.model

    def stop_token_ids(self):
        ids = set()
        if self.tokenizer.eos_token_id is not None:
            ids.add(self.tokenizer.eos_token_id)
        for token in ("<|im_end|>", "<end_of_turn>", "<|eot_id|>"):
            token_id = self.tokenizer.convert_tokens_to_ids(token)
            if isinstance(token_id, int) and token_id != self.tokenizer.unk_token_id and token_id < len(self.tokenizer):
                ids.add(token_id)
        return sorted(ids)

    # --- text ----------------------------------------------------------------------------------------------------

    def render_chat(self, conversations, addGenerationPrompt=False):
        """Renders each conversation with the model's chat template and tokenizes it. For each message, `spans` gives
        the token range [start, end) of its content: the tokens whose characters lie inside the content, so the
        caller can weight exactly a message's own words. `exact` is false when a token straddles a content edge."""
        self.require_model()
        if self.tokenizer.chat_template is None:
            raise WorkerError("this model has no chat template; load it with chat_template set")
        out = []
        for messages in conversations:
            text = self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=addGenerationPrompt)
            encoded = self.tokenizer(text, add_special_tokens=False, return_offsets_mapping=True)
            offsets = encoded["offset_mapping"]
            spans, cursor = [], 0
            for index, message in enumerate(messages):
                start = text.find(message["content"], cursor) if message["content"] else cursor
                if start < 0:
                    raise WorkerError(f"message {index}'s content does not appear verbatim in the rendered template")
                end = start + len(message["content"])
                cursor = end
                inside = [i for i, (a, b) in enumerate(offsets) if a >= start and b <= end and b > a]
                first, last = (inside[0], inside[-1] + 1) if inside else (0, 0)
                exact = "".join(text[a:b] for a, b in offsets[first:last]) == message["content"]
                spans.append({"start": first, "end": last, "exact": exact})
            out.append({"text": text, "tokens": encoded["input_ids"], "spans": spans})
        return {"rendered": out}

    def tokenize(self, texts):
        self.require_model()
        return {"tokens": [self.tokenizer(t, add_special_tokens=False)["input_ids"] for t in texts]}

    def decode(self, sequences, pieces=False):
        self.require_model()
        result = {"texts": [self.tokenizer.decode(s, skip_special_tokens=False) for s in sequences]}
        if pieces:
            result["pieces"] = [[self.tokenizer.decode([t], skip_special_tokens=False) for t in s] for s in sequences]
        return result

    # --- training ------------------------------------------------------------------------------------------------

    def forward_backward(self, datums, loss, microBatch=4):
        """Adds the gradient of the summed loss over `datums` to the accumulated gradient. `loss.kind`:
        cross_entropy (datum: tokens, weights), policy_gradient (tokens, advantages, logprobs, weights,
        refLogprobs when klCoef > 0; loss.clip, loss.klCoef), dpo (chosen/rejected {tokens, weights},
        refChosen, refRejected; loss.beta). Arrays are aligned with tokens; entry 0 is ignored.

        Under torchrun each rank takes its contiguous shard of the datums (Group.shard). The loss is a plain sum over
        datums (the caller's weights carry any normalisation, over the whole batch), so the ranks' summed gradients
        are the single-process gradient and no rank divides by its own token count or shard size."""
        kind = loss.get("kind")

        def local():
            model = self.require_model()
            if kind not in ("cross_entropy", "policy_gradient", "dpo"):
                raise WorkerError(f"forwardBackward: unknown loss kind {kind!r}")
            if not datums:
                raise WorkerError("forwardBackward: no datums")
            for index, d in enumerate(datums):
                for s in ([d["chosen"], d["rejected"]] if kind == "dpo" else [d]):
                    check_datum(s, kind if kind != "dpo" else "cross_entropy", index, len(self.tokenizer))
            start, end = self.group.shard(len(datums))
            return self.forward_backward_part(model, datums[start:end], kind, loss, max(1, int(microBatch)))

        parts = self.group.everywhere(local)
        per_datum = [v for part in parts for v in part["perDatum"]]
        result = {"loss": math.fsum(per_datum), "perDatum": per_datum, "tokens": sum(part["tokens"] for part in parts)}
        if kind == "policy_gradient":
            ratio_sum, ratio_count = math.fsum(part["ratioSum"] for part in parts), sum(part["ratioCount"] for part in parts)
            result["meanRatio"] = ratio_sum / ratio_count if ratio_count else None
            result["kl"] = math.fsum(part["kl"] for part in parts)
        if kind == "dpo":
            result["margins"] = [m for part in parts for m in part["margins"]]
            result["accuracy"] = sum(m > 0 for m in result["margins"]) / len(result["margins"])
        return result

    def forward_backward_part(self, model, datums, kind, loss, micro_batch):
        """One rank's share of forwardBackward: the sums its datums contribute (an empty shard contributes nothing)."""
        import torch

        from . import losses

        model.train()
        device = next(model.parameters()).device
        part = {"perDatum": [], "tokens": 0, "ratioSum": 0.0, "ratioCount": 0, "kl": 0.0, "margins": []}
        for chunk_start in range(0, len(datums), micro_batch):
            chunk = datums[chunk_start : chunk_start + micro_batch]
            sequences = [d["chosen"] for d in chunk] + [d["rejected"] for d in chunk] if kind == "dpo" else chunk
            tokens, mask = losses.pad([s["tokens"] for s in sequences], 0)
            tokens, mask = tokens.to(device), mask.to(device)
            weights = losses.pad([s["weights"] for s in sequences], 0.0)[0].float().to(device)
            logp = losses.token_logprobs(model, tokens, mask)
            part["tokens"] += int(mask.sum())
            if kind == "cross_entropy":
                values = losses.cross_entropy(logp, weights)
            elif kind == "policy_gradient":
                old = losses.pad([s["logprobs"] for s in chunk], 0.0)[0].float().to(device)
                advantages = losses.pad([s["advantages"] for s in chunk], 0.0)[0].float().to(device)
                kl_coef = float(loss.get("klCoef") or 0.0)
                ref = None
                if kl_coef:
                    for i, s in enumerate(chunk):
                        ref_lp = s.get("refLogprobs")
                        if not isinstance(ref_lp, list):
                            raise WorkerError(f"datum {chunk_start + i}: klCoef > 0 needs refLogprobs on every datum (logprobs with reference: true)")
                        if len(ref_lp) != len(s["tokens"]):
                            raise WorkerError(f"datum {chunk_start + i}: refLogprobs must have one entry per token ({len(s['tokens'])})")
                    ref = losses.pad([s["refLogprobs"] for s in chunk], 0.0)[0].float().to(device)
                values, ratio, kl = losses.policy_gradient(logp, old, advantages, weights, loss.get("clip"), kl_coef, ref)
                weighted = (weights != 0) & mask
                part["ratioSum"] += float(ratio[weighted].detach().sum())
                part["ratioCount"] += int(weighted.sum())
                part["kl"] += float(kl.sum())
            else:
                n = len(chunk)
                summed = (logp * weights).sum(-1)
                ref_c = torch.tensor([float(d["refChosen"]) for d in chunk], device=device)
                ref_r = torch.tensor([float(d["refRejected"]) for d in chunk], device=device)
                values, margin = losses.dpo(summed[:n], summed[n:], ref_c, ref_r, float(loss.get("beta", 0.1)))
                part["margins"] += [float(m) for m in margin]
            values.sum().backward()
            part["perDatum"] += [float(v) for v in values.detach()]
        return part

    def optim_step(self, lr, beta1=0.9, beta2=0.999, eps=1e-8, weightDecay=0.0, gradClip=None):
        """AdamW on the trainable parameters with the accumulated gradient, then clears it. Returns the gradient norm
        before clipping. Under torchrun the gradients are first summed over the ranks (every rank then takes the same
        step on the same numbers, so the replicas stay equal)."""
        import torch

        params = self.trainable()
        if not self.group.sum_gradients(params):
            raise WorkerError("optimStep: no gradient accumulated (call forwardBackward first)")
        if self.optimizer is None:
            self.optimizer = torch.optim.AdamW(params, lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weightDecay)
        for group in self.optimizer.param_groups:
            group.update(lr=lr, betas=(beta1, beta2), eps=eps, weight_decay=weightDecay)
        grads = [p.grad for p in params if p.grad is not None]
        norm = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads])).item()
        if gradClip is not None:
            torch.nn.utils.clip_grad_norm_(params, gradClip)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)
        self.steps += 1
        return {"gradNorm": norm, "step": self.steps}

    def zero_grad(self):
        """Drops the accumulated gradient without stepping."""
        for p in self.require_model().parameters():
            p.grad = None
        return {}

    def parameters(self, names=None, limit=8):
        """A few trainable tensors' sums and norms, and their gradients' norms: for tests that parameters move and
        masked tokens receive no gradient. Under torchrun the gradients shown are the sums over the ranks (what
        optimStep will apply), and `ranksAgree` says whether every rank holds the same weights."""
        model = self.require_model()
        named = [(name, p) for name, p in model.named_parameters() if p.requires_grad]
        grads = self.group.summed_gradients([p for _, p in named])
        out = []
        for (name, p), grad in zip(named, grads):
            if names is not None and name not in names:
                continue
            out.append({
                "name": name,
                "norm": float(p.detach().double().norm()),
                "sum": float(p.detach().double().sum()),
                "gradNorm": None if grad is None else float(grad.double().norm()),
                "gradSum": None if grad is None else float(grad.double().sum()),
            })
            if names is None and len(out) >= limit:
                break
        return {"parameters": out, "ranksAgree": self.ranks_agree([p for _, p in named])}

    def ranks_agree(self, params):
        """Whether every rank's trainable weights are bit-for-bit rank 0's (a digest of each rank's, compared)."""
        import hashlib

        if not self.group.distributed:
            return True
        digest = hashlib.sha256()
        for p in params:
            digest.update(p.detach().cpu().contiguous().view(-1).view(dtype=__import__("torch").uint8).numpy().tobytes())
        return len(set(self.group.all_gather(digest.hexdigest()))) == 1

    # --- inference -----------------------------------------------------------------------------------------------

    @contextlib.contextmanager
    def policy_or_reference(self, reference):
        model = self.require_model()
        if not reference:
            yield model
        elif self.config.lora is not None:
            with model.disable_adapter():
                yield model
        else:
            raise WorkerError("reference log-probs need a LoRA model (the untrained model is the adapter switched off); this one trains every weight")

    def logprobs(self, datums, reference=False, microBatch=8, temperature=1.0):
        """Per-token log-probs of each datum (position 0 is 0). `temperature`: log_softmax(logits / T), the
        distribution a sampler at T draws from (to compare with the log-probs a sampler reports). Under torchrun each
        rank scores its shard."""
        temperature = float(temperature)
        if not temperature > 0:
            raise WorkerError(f"logprobs: temperature must be > 0, not {temperature}")

        def local():
            start, end = self.group.shard(len(datums))
            return self.logprobs_part(datums[start:end], reference, microBatch, temperature)

        return {"logprobs": [row for part in self.group.everywhere(local) for row in part]}

    def logprobs_part(self, datums, reference, microBatch, temperature=1.0):
        import torch

        from . import losses

        model = self.require_model()
        device = next(model.parameters()).device
        out = []
        was_training = model.training
        model.eval()
        try:
            with torch.no_grad(), self.policy_or_reference(reference) as m:
                for start in range(0, len(datums), microBatch):
                    chunk = datums[start : start + microBatch]
                    tokens, mask = losses.pad([d["tokens"] for d in chunk], 0)
                    logp = losses.token_logprobs(m, tokens.to(device), mask.to(device), temperature)
                    out += [logp[i, : len(d["tokens"])].tolist() for i, d in enumerate(chunk)]
        finally:
            model.train(was_training)
        return out

    def sample(self, prompts, n=1, maxTokens=128, temperature=1.0, topP=1.0, topK=0, seed=0, maxBatch=16):
        """n completions per prompt (token lists) from the current weights, decoded together in left-padded batches of
        up to maxBatch sequences. Each sample carries its tokens (ending with the stop token when it stopped), its
        text without the stop token, and its finish reason. Seeded: the same call gives the same samples."""
        import torch

        model = self.require_model()
        device = next(model.parameters()).device
        stops = self.stop_token_ids()
        pad = self.tokenizer.pad_token_id
        rows = [prompt for prompt in prompts for _ in range(int(n))]
        outputs = []
        was_training = model.training
        model.eval()
        try:
            for start in range(0, len(rows), int(maxBatch)):
                chunk = rows[start : start + int(maxBatch)]
                width = max(len(r) for r in chunk)
                input_ids = torch.tensor([[pad] * (width - len(r)) + r for r in chunk], device=device)
                attention = torch.tensor([[0] * (width - len(r)) + [1] * len(r) for r in chunk], device=device)
                torch.manual_seed(int(seed) * 1_000_003 + start)
                kwargs = {"do_sample": temperature > 0, "max_new_tokens": int(maxTokens), "eos_token_id": stops, "pad_token_id": pad}
                if temperature > 0:
                    kwargs.update(temperature=float(temperature), top_p=float(topP), top_k=int(topK))
                with torch.no_grad():
                    generated = model.generate(input_ids=input_ids, attention_mask=attention, **kwargs)
                outputs += generated[:, width:].tolist()
        finally:
            model.train(was_training)
        samples = []
        for row in outputs:
            tokens = []
            for token in row:
                tokens.append(token)
                if token in stops:
                    break
            stopped = bool(tokens) and tokens[-1] in stops
            text = self.tokenizer.decode(tokens[:-1] if stopped else tokens, skip_special_tokens=False)
            samples.append({"tokens": tokens, "text": text, "finishReason": "stop" if stopped else "length"})
        return {"samples": [samples[i * int(n) : (i + 1) * int(n)] for i in range(len(prompts))]}

    # --- checkpoints ---------------------------------------------------------------------------------------------

    def save(self, path):
        """Writes the trainable weights (a PEFT adapter, or the whole model), the optimizer state and the load config
        into `path`, atomically (a folder renamed into place). Under torchrun rank 0 writes (the replicas are equal);
        the others wait for it. Nothing in the checkpoint depends on the world size, so it resumes at any."""
        return self.group.everywhere(lambda: self.save_local(path) if self.group.rank == 0 else None)[0]

    def save_local(self, path):
        import shutil

        import torch

        model = self.require_model()
        partial = path.rstrip("/") + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        os.makedirs(partial)
        model.save_pretrained(os.path.join(partial, "weights"))
        if self.config.lora is None:
            self.tokenizer.save_pretrained(os.path.join(partial, "weights"))
        if self.optimizer is not None:
            torch.save(self.optimizer.state_dict(), os.path.join(partial, "optimizer.pt"))
        with open(os.path.join(partial, "worker.json"), "w") as f:
            json.dump({"load": dataclasses.asdict(self.config), "steps": self.steps, "protocolVersion": PROTOCOL_VERSION}, f, indent=2)
        if os.path.exists(path):
            shutil.rmtree(path)
        os.replace(partial, path)
        return {"path": path, "steps": self.steps}

    def restore(self, path):
        """Loads weights and optimizer state written by save into the loaded model (same load config). Under torchrun
        rank 0 reads the checkpoint and sends its weights and optimizer state to the other ranks (no shared file
        system needed), whatever world size wrote it."""
        import torch

        self.require_model()
        steps = self.group.everywhere(lambda: self.restore_local(path) if self.group.rank == 0 else None)[0]
        if self.group.distributed:
            self.group.broadcast_tensors(self.trainable())
            mine = self.optimizer.state_dict() if self.group.rank == 0 and self.optimizer is not None else None
            state = self.group.broadcast(None if mine is None else on_cpu(mine))
            self.steps = steps["steps"]
            self.optimizer = None
            if state is not None:
                self.optimizer = torch.optim.AdamW(self.trainable(), lr=0.0)
                self.optimizer.load_state_dict(state)
        return steps

    def restore_local(self, path):
        import torch

        model = self.require_model()
        with open(os.path.join(path, "worker.json")) as f:
            saved = json.load(f)
        if saved["load"]["lora"] != (None if self.config.lora is None else dataclasses.asdict(self.config.lora)):
            raise WorkerError(f"restore: {path} was saved with a different LoRA config")
        weights = os.path.join(path, "weights")
        if self.config.lora is not None:
            from peft import set_peft_model_state_dict
            from safetensors.torch import load_file

            set_peft_model_state_dict(model, load_file(os.path.join(weights, "adapter_model.safetensors")))
        else:
            from safetensors.torch import load_file

            state = {}
            for name in os.listdir(weights):
                if name.endswith(".safetensors"):
                    state.update(load_file(os.path.join(weights, name)))
            missing, unexpected = model.load_state_dict(state, strict=False)
            if unexpected:
                raise WorkerError(f"restore: unexpected tensors {unexpected[:3]}")
        self.steps = int(saved["steps"])
        self.optimizer = None
        optimizer_path = os.path.join(path, "optimizer.pt")
        if os.path.exists(optimizer_path):
            params = [p for p in model.parameters() if p.requires_grad]
            self.optimizer = torch.optim.AdamW(params, lr=0.0)
            # map_location: a checkpoint saved on CUDA restores on a machine without it; load_state_dict moves the
            # state to each parameter's device.
            self.optimizer.load_state_dict(torch.load(optimizer_path, weights_only=True, map_location="cpu"))
        return {"steps": self.steps}

    def export_gguf(self, path, dtype="f32"):
        """Writes the trained model as a GGUF file node-llama-cpp loads: the base GGUF with the trained tensors
        replaced (see export.py). Needs a model loaded from a GGUF file."""
        from .export import export_gguf

        model = self.require_model()
        if self.config.kind != "gguf":
            raise WorkerError("exportGguf needs a model loaded from a .gguf file (its metadata and untouched tensors are copied); train from a .gguf")
        if dtype not in DTYPES:
            raise WorkerError(f"exportGguf: dtype must be one of {', '.join(DTYPES)}, not {dtype!r}")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        return export_gguf(model, self.config.lora is not None, self.config.path, path, dtype)

    def export_lora(self, path, dtype="f16"):
        """Writes the trained LoRA adapter alone as a GGUF LoRA file, applied by llama.cpp on top of the unchanged base
        GGUF (see lora_gguf.py). Needs a LoRA model loaded from a GGUF file."""
        from .lora_gguf import export_lora_gguf

        model = self.require_model()
        if self.config.kind != "gguf":
            raise WorkerError("exportLora needs a model loaded from a .gguf file (the adapter's tensors are named after the base file's); train from a .gguf")
        if self.config.lora is None:
            raise WorkerError("exportLora needs a LoRA run; this one trained every weight (--full) — export the merged model instead")
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        return export_lora_gguf(model, self.config.path, path, dtype)

    def export_peft(self, path):
        """Writes the trained LoRA adapter as a PEFT adapter folder (adapter_config.json and
        adapter_model.safetensors, peft's save_pretrained), the form vLLM's /v1/load_lora_adapter loads. Written into
        `path` + ".partial" and renamed into place, so a server never reads half a folder."""
        import shutil

        model = self.require_model()
        if self.config.lora is None:
            raise WorkerError("exportPeft needs a LoRA run; this one trained every weight (--full)")
        partial = path.rstrip("/") + ".partial"
        shutil.rmtree(partial, ignore_errors=True)
        model.save_pretrained(partial)
        if os.path.exists(path):
            shutil.rmtree(path)
        os.replace(partial, path)
        files = sorted(os.listdir(path))
        return {"path": path, "files": files, "rank": self.config.lora.rank, "alpha": self.config.lora.alpha}


def on_cpu(value):
    """A state dict with its tensors on the CPU (as pickled objects they travel between ranks over gloo)."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, dict):
        return {k: on_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(on_cpu(v) for v in value)
    return value


def check_datum(datum, kind, index, vocab):
    tokens = datum.get("tokens")
    if not isinstance(tokens, list) or len(tokens) < 2:
        raise WorkerError(f"datum {index}: tokens must be a list of at least 2 token ids")
    fields = {"cross_entropy": ["weights"], "policy_gradient": ["weights", "advantages", "logprobs"]}[kind]
    for name in fields:
        values = datum.get(name)
        if not isinstance(values, list) or len(values) != len(tokens):
            raise WorkerError(f"datum {index}: {name} must have one entry per token ({len(tokens)})")
    if any((not isinstance(t, int)) or t < 0 or t >= vocab for t in tokens):
        raise WorkerError(f"datum {index}: token ids must be integers in [0, {vocab})")
