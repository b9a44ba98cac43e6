/**
 * A coordinator's public evidence over HTTP, for the receipt check: the ceremony id and transcript
 * (`GET /api/transcript`), the receipt key (`GET /api/receipt-key`), and byte ranges of the final
 * keys (`/api/final/CIRCUIT.zkey`) and of the chains' keys (`/api/circuits/CIRCUIT/zkeys/N`).
 * fetch only, so the public page (same origin) and `ceremony verify-receipt --coordinator URL`
 * use the same code. Nothing here is trusted: the checker verifies all of it.
 */
import { CoordinatorError } from '../errors.ts';
import type { ReceiptEvidence } from './receipt-checker.ts';
import { httpRangeSource, type RangeSource } from './range-source.ts';

export interface CoordinatorEvidenceOptions {
  /** The coordinator's origin (and path prefix, if any), e.g. "https://ceremony.example". */
  baseUrl: string;
  /** How messages name it (default: "the coordinator at BASE"). */
  label?: string;
  fetch?: typeof fetch;
}

/** Far above any compiler record (a few hundred bytes): a coordinator that sends more is refused, not read. */
const MAX_COMPILER_RECORD_BYTES = 64 * 1024;

interface TranscriptAnswer {
  ceremony: string;
  entries: unknown;
}

export function coordinatorEvidence(options: CoordinatorEvidenceOptions): ReceiptEvidence {
  const base = options.baseUrl.replace(/\/+$/, '');
  const label = options.label ?? `the coordinator at ${base}`;
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);

  const get = async (route: string, what: string): Promise<Response> => {
    let response: Response;
    try {
      response = await fetchImpl(`${base}${route}`, { cache: 'no-store' });
    } catch (error) {
      throw new CoordinatorError(
        'receipt.source_unavailable',
        `cannot fetch ${what} from ${label}: ${(error as Error).message}`,
      );
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new CoordinatorError(
        'receipt.source_unavailable',
        `cannot fetch ${what} from ${label}: HTTP ${response.status}`,
      );
    }
    return response;
  };

  let transcript: Promise<TranscriptAnswer> | undefined;
  const transcriptAnswer = (): Promise<TranscriptAnswer> =>
    (transcript ??= (async () => {
      const answer = (await (
        await get('/api/transcript', 'the transcript')
      )
        .json()
        .catch(() => null)) as Partial<TranscriptAnswer> | null;
      if (typeof answer?.ceremony !== 'string')
        throw new CoordinatorError(
          'receipt.source_unavailable',
          `the transcript ${label} serves is not a transcript answer`,
        );
      return { ceremony: answer.ceremony, entries: answer.entries };
    })());

  return {
    label,
    ceremonyId: async () => (await transcriptAnswer()).ceremony,
    async testNetwork() {
      const ceremony = (await (await get('/api/ceremony', 'the ceremony')).json().catch(() => null)) as {
        testNetwork?: unknown;
      } | null;
      return ceremony?.testNetwork === true ? 'the coordinator says "testNetwork": true' : undefined;
    },
    transcriptEntries: async () => (await transcriptAnswer()).entries,
    async compilerRecord() {
      let response: Response;
      try {
        response = await fetchImpl(`${base}/api/final/compiler.json`, { cache: 'no-store' });
      } catch (error) {
        throw new CoordinatorError(
          'receipt.source_unavailable',
          `cannot fetch the compiler record from ${label}: ${(error as Error).message}`,
        );
      }
      if (response.status === 404) {
        await response.body?.cancel();
        return undefined;
      }
      if (!response.ok || response.body === null) {
        await response.body?.cancel();
        throw new CoordinatorError(
          'receipt.source_unavailable',
          `cannot fetch the compiler record from ${label}: HTTP ${response.status}`,
        );
      }
      return readBounded(response.body, MAX_COMPILER_RECORD_BYTES, `the compiler record ${label} serves`);
    },
    async receiptPublicKeyPem() {
      return (await get('/api/receipt-key', 'the receipt key')).text();
    },
    keySource(circuit: string, key: { final: true } | { index: number }): RangeSource {
      const name = encodeURIComponent(circuit);
      return 'final' in key
        ? httpRangeSource(`${base}/api/final/${name}.zkey`, { label: `the final key of ${circuit}`, fetch: fetchImpl })
        : httpRangeSource(`${base}/api/circuits/${name}/zkeys/${key.index}`, {
            label: `contribution ${key.index} of ${circuit}`,
            fetch: fetchImpl,
          });
    },
  };
}

/** A body read to its end, refused once it passes `limit` bytes (the rest is never read). */
async function readBounded(body: ReadableStream<Uint8Array>, limit: number, what: string): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new CoordinatorError('compiler.record_invalid', `${what} is over ${limit} bytes: no compiler record is`);
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}
