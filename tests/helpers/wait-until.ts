/**
 * Polls `condition` every 20 ms until it holds (a condition that throws counts as not yet), and
 * fails with what was awaited after `timeoutMs`: for tests that wait on files, logs or state
 * another process changes, never on a fixed sleep.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (
    !(await Promise.resolve()
      .then(condition)
      .catch(() => false))
  ) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
