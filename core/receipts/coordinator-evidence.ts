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
