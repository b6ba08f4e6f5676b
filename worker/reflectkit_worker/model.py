"""Loading a causal LM for training: a GGUF file (transformers reads it through the `gguf` package), a local Hugging
Face folder, or a tiny randomly initialised model for tests. LoRA (PEFT) by default, full fine-tuning optional."""

import dataclasses
import hashlib
import os
from dataclasses import dataclass, field
from typing import Optional


class WorkerError(Exception):
    """A mistake the caller can fix; its message says how."""


@dataclass
class LoraConfig:
    rank: int = 16
    alpha: float = 32.0
    dropout: float = 0.0
    target_modules: list = field(default_factory=lambda: ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"])


@dataclass
class TinyConfig:
    """A small random model on a real tokenizer, for conformance tests: same code paths, seconds per step."""

    tokenizer: str = ""
    layers: int = 2
    hidden: int = 64
    heads: int = 4
    intermediate: int = 128


@dataclass
class LoadConfig:
    """Echoed next to every checkpoint, so a checkpoint says what it was trained from."""

    kind: str = "gguf"  # gguf | hf | tiny
    path: str = ""
    tiny: Optional[TinyConfig] = None
    lora: Optional[LoraConfig] = None
    dtype: str = "float32"
    device: str = "auto"
    seed: int = 0
    cache_dir: str = ""
    chat_template: Optional[str] = None

    @staticmethod
    def from_params(params: dict) -> "LoadConfig":
        known = {f.name for f in dataclasses.fields(LoadConfig)}
        unknown = set(params) - known
        if unknown:
            raise WorkerError(f"load: unknown fields {sorted(unknown)}")
        config = LoadConfig(**params)
        if isinstance(config.tiny, dict):
            config.tiny = TinyConfig(**config.tiny)
        if isinstance(config.lora, dict):
            config.lora = LoraConfig(**config.lora)
        if config.kind not in ("gguf", "hf", "tiny"):
            raise WorkerError(f"load: kind must be gguf, hf or tiny, not {config.kind!r}")
        return config


def pick_device(name: str):
    import torch

    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(name)


def load_tokenizer(path: str, cache_dir: str):
    from transformers import AutoTokenizer

    folder = converted_folder(path, cache_dir)
    if folder is not None and os.path.exists(os.path.join(folder, "tokenizer_config.json")):
        return AutoTokenizer.from_pretrained(folder)
    if path.endswith(".gguf"):
        return AutoTokenizer.from_pretrained(os.path.dirname(os.path.abspath(path)), gguf_file=os.path.basename(path))
    return AutoTokenizer.from_pretrained(path)


def converted_folder(path: str, cache_dir: str) -> Optional[str]:
    """Where a GGUF converted to a Hugging Face folder is kept: dequantising and converting the tokenizer takes tens
    of seconds, so it happens once per file."""
    if not path.endswith(".gguf") or not cache_dir:
        return None
    stat = os.stat(path)
    key = hashlib.sha256(f"{os.path.abspath(path)}:{stat.st_size}:{int(stat.st_mtime)}".encode()).hexdigest()[:16]
    return os.path.join(cache_dir, f"{os.path.basename(path)[:-5]}-{key}")


def load_model(config: LoadConfig):
    """Returns (model, tokenizer). The model is in training mode with only its trainable parameters requiring grad."""
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(config.seed)
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}.get(config.dtype)
    if dtype is None:
        raise WorkerError(f"load: dtype must be float32, bfloat16 or float16, not {config.dtype!r}")
    if config.kind == "tiny":
        if config.tiny is None or not config.tiny.tokenizer:
            raise WorkerError("load: a tiny model needs tiny.tokenizer (a .gguf file or a Hugging Face folder)")
        tokenizer = load_tokenizer(config.tiny.tokenizer, config.cache_dir)
        t = config.tiny
        model = LlamaForCausalLM(
            LlamaConfig(
                vocab_size=len(tokenizer),
                hidden_size=t.hidden,
                num_hidden_layers=t.layers,
                num_attention_heads=t.heads,
                num_key_value_heads=t.heads,
                intermediate_size=t.intermediate,
                max_position_embeddings=2048,
                tie_word_embeddings=True,
                bos_token_id=tokenizer.bos_token_id,
                eos_token_id=tokenizer.eos_token_id,
            )
        ).to(dtype)
    else:
        if not os.path.exists(config.path):
            raise WorkerError(f"load: no model at {config.path}")
        folder = converted_folder(config.path, config.cache_dir)
        if folder is not None and os.path.exists(os.path.join(folder, "config.json")):
            tokenizer = load_tokenizer(config.path, config.cache_dir)
            model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype)
        elif config.kind == "gguf":
            directory, name = os.path.dirname(os.path.abspath(config.path)), os.path.basename(config.path)
            tokenizer = load_tokenizer(config.path, "")
            model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, dtype=dtype)
            if folder is not None:
                os.makedirs(os.path.dirname(folder), exist_ok=True)
                partial = folder + ".partial"
                # The weights are plain dequantised tensors now; drop the GGUF marker so they can be saved.
                model.hf_quantizer = None
                if hasattr(model.config, "quantization_config"):
                    del model.config.quantization_config
                model.save_pretrained(partial)
                tokenizer.save_pretrained(partial)
                os.replace(partial, folder)
        else:
            tokenizer = load_tokenizer(config.path, "")
            model = AutoModelForCausalLM.from_pretrained(config.path, dtype=dtype)
    if config.chat_template is not None:
        tokenizer.chat_template = config.chat_template
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    model.to(pick_device(config.device))
    if config.lora is not None:
        from peft import LoraConfig as PeftLoraConfig, get_peft_model

        present = {name.split(".")[-1] for name, _ in model.named_modules()}
        targets = [m for m in config.lora.target_modules if m in present]
        if not targets:
            raise WorkerError(f"load: none of the LoRA target modules {config.lora.target_modules} exist in this model")
        model = get_peft_model(
            model,
            PeftLoraConfig(r=config.lora.rank, lora_alpha=config.lora.alpha, lora_dropout=config.lora.dropout, target_modules=targets, bias="none"),
        )
    model.train()
    return model, tokenizer
