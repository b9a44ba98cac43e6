/**
 * The canonical JSON a transcript entry's hash is computed over: keys sorted at every level,
 * undefined values left out, no whitespace. No imports, so the coordinator (transcript.ts) and the
 * browser's receipt check (core/receipts/public-transcript.ts) hash exactly the same text.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}
