"""Writing a trained model back to GGUF, so node-llama-cpp runs it: the base GGUF is copied with its metadata and
every tensor training did not touch kept byte for byte (quantised as it was); the trained tensors are mapped back to
llama.cpp's layout and written in F32, F16, Q8_0, Q4_0 or Q4_1, or ("base") re-quantised to the type each had in the
base file, so the export is as small and fast as the file it came from. Each mapping is checked on the base weights
before it is trusted."""

import os

import numpy as np

from .model import WorkerError


def permute_for_llama_cpp(w, n_head):
    """llama.cpp's convert_hf_to_gguf permutes the rows of Q and K (rotary halves interleaved); transformers undoes
    it when reading a GGUF. This redoes it."""
    return w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


DTYPES = ("f32", "f16", "q8_0", "q4_0", "q4_1", "base")


def encode(array, dtype, base_type, tensor_name):
    """The tensor as written: (data, raw GGML type or None for plain float arrays)."""
    import gguf

    T = gguf.GGMLQuantizationType
    qtype = base_type if dtype == "base" else {"f32": T.F32, "f16": T.F16, "q8_0": T.Q8_0, "q4_0": T.Q4_0, "q4_1": T.Q4_1}[dtype]
    if qtype == T.F32:
        return array.astype(np.float32), None
    if qtype == T.F16:
        return array.astype(np.float16), None
    try:
        return gguf.quants.quantize(np.ascontiguousarray(array, dtype=np.float32), qtype), qtype
    except NotImplementedError:
        raise WorkerError(f"export: gguf-py cannot quantise {tensor_name} to {qtype.name}; export with --dtype f16, q8_0, q4_0 or q4_1") from None
    except Exception as error:  # a row length that is not a multiple of the block size, for one
        raise WorkerError(f"export: cannot quantise {tensor_name} {tuple(array.shape)} to {qtype.name}: {error}") from None


def field(reader, key):
    f = reader.get_field(key)
    return None if f is None else f.contents()


def trained_tensors(model, lora):
    """HF name → (trained weight, base weight) for every tensor training changed. With LoRA that is each wrapped
    linear layer, merged (W + scale·B·A); fully fine-tuned, every parameter that differs from the base file."""
    import torch

    out = {}
    with torch.no_grad():
        if lora:
            for name, module in model.named_modules():
                if hasattr(module, "get_delta_weight") and hasattr(module, "base_layer"):
                    base = module.base_layer.weight.detach().float()
                    delta = module.get_delta_weight("default").detach().float()
                    hf = name.removeprefix("base_model.model.") + ".weight"
                    out[hf] = (base + delta, base)
        else:
            for name, param in model.named_parameters():
                out[name] = (param.detach().float(), None)
    return out


def base_layout(reader, verb):
    """What mapping Hugging Face tensors onto a base GGUF needs: its architecture, attention heads (for the q/k
    permutation), gguf-py's tensor-name map and the base's tensors by name."""
    import gguf

    arch = field(reader, "general.architecture")
    n_layers = field(reader, f"{arch}.block_count")
    n_head = field(reader, f"{arch}.attention.head_count")
    n_head_kv = field(reader, f"{arch}.attention.head_count_kv") or n_head
    arch_enum = next((a for a, n in gguf.MODEL_ARCH_NAMES.items() if n == arch), None)
    if arch_enum is None:
        raise WorkerError(f"{verb}: unknown GGUF architecture {arch!r}")
    return arch, n_head, n_head_kv, gguf.get_tensor_name_map(arch_enum, n_layers), {t.name: t for t in reader.tensors}


def export_gguf(model, lora, base_path, out_path, dtype="f32"):
    import gguf

    reader = gguf.GGUFReader(base_path, "r")
    arch = field(reader, "general.architecture")
    if not lora and arch != "llama":
        raise WorkerError(f"export: a fully fine-tuned {arch} model cannot be mapped back to GGUF here (only llama); train a LoRA adapter")
    _, n_head, n_head_kv, names, by_name = base_layout(reader, "export")

    def to_gguf(hf_name, w):
        stem = hf_name.removesuffix(".weight")
        mapped = names.get_name(stem)
        if mapped is None:
            raise WorkerError(f"export: no GGUF name for {hf_name}")
        gguf_name = mapped + ".weight"
        array = w.cpu().numpy()
        if arch in ("llama",) and gguf_name.endswith("attn_q.weight"):
            array = permute_for_llama_cpp(array, n_head)
        elif arch in ("llama",) and gguf_name.endswith("attn_k.weight"):
            array = permute_for_llama_cpp(array, n_head_kv)
        return gguf_name, array

    replacements = {}
    changed = 0
    for hf_name, (trained, base) in trained_tensors(model, lora).items():
        gguf_name, array = to_gguf(hf_name, trained)
        tensor = by_name.get(gguf_name)
        if tensor is None:
            if hf_name == "lm_head.weight":
                continue  # tied to the embeddings in the file
            raise WorkerError(f"export: {gguf_name} (from {hf_name}) is not in {base_path}")
        original = gguf.quants.dequantize(tensor.data, tensor.tensor_type).reshape(array.shape)
        if base is not None:
            # The mapping must turn the base weights into exactly what the file holds, or it is wrong for this model.
            _, mapped_base = to_gguf(hf_name, base)
            if not np.allclose(mapped_base, original, atol=1e-6, rtol=0):
                raise WorkerError(f"export: mapping {hf_name} → {gguf_name} does not reproduce the base file ({arch}); cannot export")
        elif np.array_equal(array.astype(original.dtype), original):
            continue
        replacements[gguf_name] = encode(array, dtype, tensor.tensor_type, gguf_name)
        changed += 1

    partial = out_path + ".partial"
    writer = gguf.GGUFWriter(partial, arch=arch, endianess=reader.endianess)
    alignment = field(reader, "general.alignment")
    if alignment is not None:
        writer.data_alignment = alignment
    for f in reader.fields.values():
        if f.name == "general.architecture" or f.name.startswith("GGUF."):
            continue
        value_type = f.types[0]
        sub_type = f.types[-1] if value_type == gguf.GGUFValueType.ARRAY else None
        writer.add_key_value(f.name, f.contents(), value_type, sub_type=sub_type)
    for tensor in reader.tensors:
        if tensor.name in replacements:
            a, raw = replacements[tensor.name]
            writer.add_tensor_info(tensor.name, a.shape, a.dtype, a.nbytes, raw)
        else:
            writer.add_tensor_info(tensor.name, tensor.data.shape, tensor.data.dtype, tensor.data.nbytes, tensor.tensor_type)
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    for tensor in reader.tensors:
        if tensor.name in replacements:
            writer.write_tensor_data(replacements[tensor.name][0])
        else:
            writer.write_tensor_data(tensor.data, tensor_endianess=reader.endianess)
    writer.close()
    os.replace(partial, out_path)
    return {"path": out_path, "replaced": changed, "tensors": len(reader.tensors), "architecture": arch}
