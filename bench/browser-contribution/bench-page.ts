/**
 * The benchmark page: the browser app's own contribution path (computeContribution and its Web
 * Worker, imported from web/src, not a copy), driven by bench/browser-contribution.ts through
 * `benchContribute` on the page's global. Timing is taken here with performance.now(), so
 * Playwright's round trips are not part of it.
 */
import { computeContribution } from '../../web/src/contribute/compute-contribution.ts';
import type { BenchPageGlobal, BrowserContributionResult } from './bench-result.ts';

const OUTPUT_SLICE = 8 * 1024 * 1024;

async function benchContribute(zkeyUrl: string, outputUrl: string): Promise<BrowserContributionResult> {
  const downloadStart = performance.now();
  // no-store: with --runs N every run must really fetch the head, as a contributor's page does.
  const response = await fetch(zkeyUrl, { cache: 'no-store' });
  if (!response.ok) throw new Error(`GET ${zkeyUrl} answered ${response.status}`);
  const head = new Uint8Array(await response.arrayBuffer());
  const downloadMs = performance.now() - downloadStart;

  const computeStart = performance.now();
  // Progress is ignored: the app only paints it, which is not part of the work being timed.
  const { zkey, hash } = await computeContribution(
    { head, name: 'bench', typedEntropy: '' },
    () => {},
    new AbortController().signal,
  );
  const computeMs = performance.now() - computeStart;

  // In slices, as the app's tus upload does: Chromium hands every request body to the DevTools
  // protocol as one JSON string, and a 2^18 key in one body makes a message Playwright cannot read.
  for (let offset = 0; offset < zkey.byteLength; offset += OUTPUT_SLICE) {
    // The worker transferred a plain ArrayBuffer (never shared memory), which fetch's BodyInit wants.
    const slice = zkey.subarray(offset, offset + OUTPUT_SLICE) as Uint8Array<ArrayBuffer>;
    const upload = await fetch(`${outputUrl}?offset=${offset}`, { method: 'PUT', body: slice });
    if (!upload.ok) throw new Error(`PUT ${outputUrl}?offset=${offset} answered ${upload.status}`);
  }
  return {
    downloadMs,
    computeMs,
    hash,
    outputBytes: zkey.byteLength,
    hardwareConcurrency: navigator.hardwareConcurrency,
  };
}

(globalThis as typeof globalThis & BenchPageGlobal).benchContribute = benchContribute;
