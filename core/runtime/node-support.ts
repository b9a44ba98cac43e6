/**
 * Whether the Node.js line a process runs on still gets security fixes. The coordinator holds
 * contributors' sessions and the ceremony's keys; a runtime past its end of life gets no fixes for
 * the HTTP parser, TLS or the crypto it relies on, and the operator should hear it at start-up.
 */

/** The end of each line's security support (nodejs.org's release schedule), as UTC dates. */
const END_OF_LIFE: Readonly<Record<number, string>> = {
  18: '2025-04-30',
  19: '2023-06-01',
  20: '2026-04-30',
  21: '2024-06-01',
  22: '2027-04-30',
  23: '2025-06-01',
  24: '2028-04-30',
  25: '2026-06-01',
};

/** The line the project is built, tested and shipped (Docker image) on. */
export const SUPPORTED_NODE_MAJOR = 24;

/**
 * A sentence for the operator when `nodeVersion`'s line is past its end of life on `now`,
 * or undefined while it is supported (or when it is newer than this table, so not yet ended).
 */
export function nodeEndOfLifeWarning(nodeVersion: string, now: Date): string | undefined {
  const major = Number(nodeVersion.replace(/^v/, '').split('.')[0]);
  const endOfLife = END_OF_LIFE[major];
  if (endOfLife === undefined) {
    return major < SUPPORTED_NODE_MAJOR
      ? `Node ${major} is past its end of life; run on Node ${SUPPORTED_NODE_MAJOR}`
      : undefined;
  }
  const DAY_MS = 86_400_000; // the last day of support is supported, to its end (UTC)
  if (now.getTime() < Date.parse(endOfLife) + DAY_MS) return undefined;
  return `Node ${major} has had no security fixes since ${endOfLife}; run on Node ${SUPPORTED_NODE_MAJOR}`;
}
