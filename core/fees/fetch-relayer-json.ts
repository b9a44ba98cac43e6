/**
 * One GET to a relayer endpoint, bounded in time (connection, headers and body together) and in
 * size, that never throws: whatever goes wrong comes back as a one-line reason naming the URL,
 * so the fee check can report it on the claim's line and go on with the others.
 */

export type RelayerAnswer = { ok: true; body: unknown } | { ok: false; reason: string };

/** A quote is a few dozen bytes; a body this large is not a quote, and is not read further. */
const MAX_RELAYER_BODY_BYTES = 64 * 1024;

export async function fetchRelayerJson(url: string, timeoutMs: number): Promise<RelayerAnswer> {
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    const response = await fetch(url, { headers: { accept: 'application/json' }, redirect: 'follow', signal });
    if (!response.ok) {
      await response.body?.cancel();
      return {
        ok: false,
        reason: `GET ${url} answered ${response.status}${response.statusText ? ` ${response.statusText}` : ''}`,
      };
    }
    const text = await readLimited(response);
    if (text === undefined)
      return { ok: false, reason: `GET ${url} answered more than ${MAX_RELAYER_BODY_BYTES} bytes, which is no quote` };
    try {
      return { ok: true, body: JSON.parse(text) as unknown };
    } catch {
      const type = response.headers.get('content-type');
      const start = JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}…` : text);
      return { ok: false, reason: `GET ${url} answered a body that is not JSON${type ? ` (${type})` : ''}: ${start}` };
    }
  } catch (error) {
    if (signal.aborted) return { ok: false, reason: `GET ${url} did not answer within ${timeoutMs} ms` };
    return { ok: false, reason: `GET ${url} failed: ${describeFetchError(error)}` };
  }
}

/** The body as text, or undefined once it passes the limit (the rest is not downloaded). */
async function readLimited(response: Response): Promise<string | undefined> {
  if (!response.body) return '';
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_RELAYER_BODY_BYTES) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** fetch says only "fetch failed"; the cause says why (`connect ECONNREFUSED 127.0.0.1:8545`). */
function describeFetchError(error: unknown): string {
  let root: unknown = error;
  while (root instanceof Error && root.cause instanceof Error) root = root.cause;
  const message = root instanceof Error ? root.message : String(root);
  return message.split('\n')[0]!.trim();
}
