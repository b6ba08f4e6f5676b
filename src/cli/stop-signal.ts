/** A long-running command (`reflect serve`, `reflect vllm serve`) waits on this for its end. */
/** Resolves on the first SIGINT or SIGTERM. */
export function stopSignal(): Promise<void> {
  return new Promise((resolve) => {
    const stop = (): void => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}
