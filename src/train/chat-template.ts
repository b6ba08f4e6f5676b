
/**
 * Jinja chat templates that render a conversation exactly as node-llama-cpp's built-in chat wrappers do, token for
 * token, so a model is trained on the prompts it is later evaluated with (`reflect eval` runs it through
 * node-llama-cpp). SmolLM2's own template adds a default system prompt that node-llama-cpp's ChatML wrapper does not;
 * Gemma's folds a system message into the first user turn.
 */
const templates: Record<string, string> = {
  ChatML:
    "{{ bos_token }}{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}" +
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}",
  Gemma:
    "{{ bos_token }}{% set sys = namespace(text='') %}{% for m in messages %}{% if m['role'] == 'system' %}" +
    "{% set sys.text = m['content'] + '\n\n---\n\n' %}{% else %}<start_of_turn>{{ 'model' if m['role'] == 'assistant' else 'user' }}\n" +
    "{% if m['role'] == 'user' %}{{ sys.text }}{% set sys.text = '' %}{% endif %}{{ m['content'] }}<end_of_turn>\n{% endif %}{% endfor %}" +
    "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}",
};

/**
 * The chat template matching what node-llama-cpp uses for this GGUF, or undefined when its wrapper has no known
 * equivalent (the model's own template is used then, and prompts may differ from inference).
 */
export async function inferenceChatTemplate(ggufPath: string): Promise<{ wrapper: string; template: string | undefined }> {
  const { getLlama, resolveChatWrapper } = await import("node-llama-cpp");
  const llama = await getLlama({ gpu: false, build: "never", logLevel: "error" as never, progressLogs: false });
  const model = await llama.loadModel({ modelPath: ggufPath, vocabOnly: true });
  try {
    const wrapper = resolveChatWrapper(model).wrapperName;
    return { wrapper, template: templates[wrapper] };
  } finally {
    await model.dispose();
  }
}
