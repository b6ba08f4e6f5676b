"""Writing a trained LoRA adapter as a GGUF LoRA file, the format llama.cpp's convert_lora_to_gguf.py writes and
llama_adapter_lora_init reads, so node-llama-cpp (or llama.cpp's server) applies it on top of the unchanged base GGUF:

- metadata: general.type = "adapter", general.architecture = the base's (llama.cpp refuses another), adapter.type =
  "lora", adapter.lora.alpha (f32);
- per adapted linear layer, `<GGUF name of the base weight>.lora_a` and `.lora_b`, e.g. `blk.0.attn_q.weight.lora_a`;
  numpy shapes as PEFT holds them, A (r, n_in) and B (n_out, r) — GGUF dims reversed, so llama.cpp sees
  A->ne = [n_in, r] and B->ne = [r, n_out], the shapes it checks against the base tensor;
- llama.cpp scales B·A·x by alpha / r (r read from B), PEFT by its `scaling`, so alpha is written as scaling · r;
- for the llama architecture llama.cpp's converter permutes the rows of attn_q / attn_k (rotary halves interleaved);
  rows of W = B·A are rows of B, so B of q_proj / k_proj is permuted the same way and A is left alone, as
  convert_lora_to_gguf does through its LoraTorchTensor.

Each mapping is checked on the base weights first: the mapped PyTorch base weight must be what the base file holds.
"""

import os

import numpy as np

from .export import base_layout, field, permute_for_llama_cpp
from .model import WorkerError

LORA_DTYPES = ("f32", "f16")


def lora_layers(model):
    """(HF weight name, base weight, A, B, scaling) of every LoRA-wrapped linear layer of a PEFT model."""
    out = []
    for name, module in model.named_modules():
        if not (hasattr(module, "lora_A") and hasattr(module, "base_layer") and "default" in getattr(module, "lora_A", {})):
            continue
        if getattr(module, "fan_in_fan_out", False):
            raise WorkerError(f"exportLora: {name} stores its weight transposed (fan_in_fan_out); not supported")
        hf = name.removeprefix("base_model.model.") + ".weight"
        a = module.lora_A["default"].weight.detach().float().cpu().numpy()
        b = module.lora_B["default"].weight.detach().float().cpu().numpy()
        base = module.base_layer.weight.detach().float().cpu().numpy()
        out.append((hf, base, a, b, float(module.scaling["default"])))
    return out


def export_lora_gguf(model, base_path, out_path, dtype="f16"):
    import gguf

    if dtype not in LORA_DTYPES:
        raise WorkerError(f"exportLora: dtype must be one of {', '.join(LORA_DTYPES)}, not {dtype!r} (llama.cpp LoRA tensors are f32 or f16 here)")
    layers = lora_layers(model)
    if not layers:
        raise WorkerError("exportLora: the model has no LoRA layers; train with a LoRA adapter (not --full)")
    reader = gguf.GGUFReader(base_path, "r")
    arch, n_head, n_head_kv, names, by_name = base_layout(reader, "exportLora")
    scalings = {round(s * a.shape[0], 6) for _, _, a, _, s in layers}
    if len(scalings) != 1:
        raise WorkerError(f"exportLora: layers use different alpha ({sorted(scalings)}); a GGUF LoRA file holds one")
    alpha = scalings.pop()

    def permutation(gguf_name):
        if arch != "llama":
            return lambda w: w
        if gguf_name.endswith("attn_q.weight"):
            return lambda w: permute_for_llama_cpp(w, n_head)
        if gguf_name.endswith("attn_k.weight"):
            return lambda w: permute_for_llama_cpp(w, n_head_kv)
        return lambda w: w

    np_dtype = np.float32 if dtype == "f32" else np.float16
    tensors = []
    for hf, base, a, b, _ in layers:
        mapped = names.get_name(hf.removesuffix(".weight"))
        if mapped is None:
            raise WorkerError(f"exportLora: no GGUF name for {hf}")
        gguf_name = mapped + ".weight"
        tensor = by_name.get(gguf_name)
        if tensor is None:
            raise WorkerError(f"exportLora: {gguf_name} (from {hf}) is not in {base_path}")
        permute = permutation(gguf_name)
        original = gguf.quants.dequantize(tensor.data, tensor.tensor_type).reshape(base.shape)
        if not np.allclose(permute(base), original, atol=1e-6, rtol=0):
            raise WorkerError(f"exportLora: mapping {hf} → {gguf_name} does not reproduce the base file ({arch}); cannot export")
        tensors.append((gguf_name + ".lora_a", a.astype(np_dtype)))
        tensors.append((gguf_name + ".lora_b", permute(b).astype(np_dtype)))

    partial = out_path + ".partial"
    writer = gguf.GGUFWriter(partial, arch=arch, endianess=reader.endianess)
    writer.add_type(gguf.GGUFType.ADAPTER)
    writer.add_string(gguf.Keys.Adapter.TYPE, "lora")
    writer.add_float32(gguf.Keys.Adapter.LORA_ALPHA, float(alpha))
    base_name = field(reader, "general.name")
    if base_name is not None:
        writer.add_name(f"{base_name} LoRA")
        writer.add_base_model_count(1)
        writer.add_base_model_name(0, base_name)
    for name, array in tensors:
        writer.add_tensor(name, np.ascontiguousarray(array))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    os.replace(partial, out_path)
    rank = layers[0][2].shape[0]
    return {"path": out_path, "architecture": arch, "tensors": len(tensors), "layers": len(layers), "rank": int(rank), "alpha": float(alpha), "dtype": dtype}
