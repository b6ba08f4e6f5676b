/**
 * The content of the last `<answer>…</answer>` block, or null. Linear time on any input (no regex backtracking):
 * scans for the last closing tag, then the last opening tag before it.
 */
export function lastAnswerBlock(output: string): string | null {
  const lower = output.toLowerCase();
  const close = lower.lastIndexOf("</answer>");
  if (close < 0) return null;
  const open = lower.lastIndexOf("<answer>", close);
  if (open < 0) return null;
  return output.slice(open + "<answer>".length, close);
}
