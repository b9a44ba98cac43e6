/** Downloads one zkey of a chain with byte-level progress (streamed; the total from Content-Length). */
import { apiErrorFromBody } from '../api/api-client.ts';

export async function downloadZkey(circuit: string, index: number, onProgress: (loaded: number, total: number | null) => void, signal: AbortSignal): Promise<Uint8Array> {
  const response = await fetch(`/api/circuits/${encodeURIComponent(circuit)}/zkeys/${index}`, { signal, cache: 'no-store' });
  if (!response.ok || !response.body) throw apiErrorFromBody(response.status, await response.text());
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : null;
  const chunks: Uint8Array[] = [];
  let loaded = 0;
  onProgress(0, total);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onProgress(loaded, total);
  }
  const bytes = new Uint8Array(loaded);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}
