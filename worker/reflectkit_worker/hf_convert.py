"""GGUF → Hugging Face folder, for servers that load transformers folders (vLLM): dequantised weights, the tokenizer
with its chat template, and a generation config whose end-of-sequence ids include the chat template's end-of-turn.

Run as `python -m reflectkit_worker.hf_convert GGUF OUT [--dtype float32|bfloat16]`; prints one JSON line on success.
Needs torch, transformers, gguf and accelerate, and nothing else of the worker's, so it runs in any venv that has them.
"""

import argparse
import json
import os
import shutil
import sys


def convert(gguf: str, out: str, dtype_name: str) -> dict:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GenerationConfig

    if not os.path.isfile(gguf):
        raise SystemExit(f"hf_convert: no GGUF file at {gguf}")
    dtype = {"float32": torch.float32, "bfloat16": torch.bfloat16}.get(dtype_name)
    if dtype is None:
        raise SystemExit(f"hf_convert: --dtype must be float32 or bfloat16, not {dtype_name!r}")
    directory, name = os.path.dirname(os.path.abspath(gguf)), os.path.basename(gguf)
    tokenizer = AutoTokenizer.from_pretrained(directory, gguf_file=name)
    model = AutoModelForCausalLM.from_pretrained(directory, gguf_file=name, dtype=dtype)
    # transformers marks a model read from GGUF as quantised and refuses to save it; the tensors are plain
    # dequantised weights by now, so dropping the marker saves an ordinary folder any loader reads.
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    # A chat model's turn ends with a token of its template (SmolLM2's <|im_end|>), which GGUF may not list as the
    # end of sequence; a server stops on the generation config's eos ids, so both go there.
    eos = set()
    for value in (model.config.eos_token_id, tokenizer.eos_token_id):
        if isinstance(value, int):
            eos.add(value)
        elif isinstance(value, list):
            eos.update(v for v in value if isinstance(v, int))
    vocab = tokenizer.get_vocab()
    for token in ("<|im_end|>", "<|eot_id|>", "<end_of_turn>"):
        if token in vocab:
            eos.add(vocab[token])
    generation = GenerationConfig(bos_token_id=model.config.bos_token_id, eos_token_id=sorted(eos))
    partial = out.rstrip("/") + ".partial"
    shutil.rmtree(partial, ignore_errors=True)
    model.save_pretrained(partial)
    tokenizer.save_pretrained(partial)
    generation.save_pretrained(partial)
    shutil.rmtree(out, ignore_errors=True)
    os.replace(partial, out)
    return {
        "out": os.path.abspath(out),
        "architecture": (model.config.architectures or ["?"])[0],
        "eos_token_ids": sorted(eos),
        "chat_template": tokenizer.chat_template is not None,
        "max_position_embeddings": getattr(model.config, "max_position_embeddings", None),
    }


def main(argv: list) -> None:
    parser = argparse.ArgumentParser(prog="reflectkit_worker.hf_convert")
    parser.add_argument("gguf")
    parser.add_argument("out")
    parser.add_argument("--dtype", default="bfloat16")
    args = parser.parse_args(argv)
    print(json.dumps(convert(args.gguf, args.out, args.dtype)))


if __name__ == "__main__":
    main(sys.argv[1:])
