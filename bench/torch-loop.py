"""The bare PyTorch loop that bench/train-overhead.mjs compares the worker with: the same model, LoRA config, batch
and loss (weighted token cross-entropy summed, AdamW), with no protocol, no reflectkit code.
Usage: python torch-loop.py BATCH.json  (written by train-overhead.mjs); prints one JSON line of step seconds."""

import json
import sys
import time

import torch
import torch.nn.functional as F
from peft import LoraConfig, get_peft_model
from transformers import AutoModelForCausalLM

spec = json.load(open(sys.argv[1]))
torch.manual_seed(0)
model = AutoModelForCausalLM.from_pretrained(spec["folder"], dtype=torch.float32)
model = get_peft_model(model, LoraConfig(r=spec["rank"], lora_alpha=spec["alpha"], target_modules=spec["targets"], lora_dropout=0.0, bias="none"))
model.train()
optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-4)
width = max(len(d["tokens"]) for d in spec["datums"])
tokens = torch.zeros((len(spec["datums"]), width), dtype=torch.long)
weights = torch.zeros((len(spec["datums"]), width))
mask = torch.zeros((len(spec["datums"]), width), dtype=torch.long)
for i, d in enumerate(spec["datums"]):
    tokens[i, : len(d["tokens"])] = torch.tensor(d["tokens"])
    weights[i, : len(d["weights"])] = torch.tensor(d["weights"])
    mask[i, : len(d["tokens"])] = 1
micro = spec["microBatch"]
seconds = []
for step in range(spec["steps"]):
    start = time.perf_counter()
    for s in range(0, len(spec["datums"]), micro):
        t, w, m = tokens[s : s + micro], weights[s : s + micro], mask[s : s + micro]
        width_here = int(m.sum(1).max())  # padded to the micro-batch's longest, as the worker does
        t, w, m = t[:, :width_here].contiguous(), w[:, :width_here].contiguous(), m[:, :width_here].contiguous()
        logits = model(input_ids=t, attention_mask=m).logits.float()
        logp = torch.log_softmax(logits[:, :-1], -1).gather(-1, t[:, 1:, None]).squeeze(-1)
        loss = -(logp * w[:, 1:]).sum()
        loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    seconds.append(time.perf_counter() - start)
print(json.dumps({"seconds": seconds, "tokens": int(mask.sum())}))
