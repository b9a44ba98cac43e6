/**
 * Server transfer: one contribution of a 2^P-constraint key (default 2^16) uploaded over tus by a
 * demo contributor, verified and committed, then the new head downloaded, while the coordinator
 * (its own process) and its embedded verifier (a child process) have their RSS sampled every
 * 20 ms. Prints the coordinator's RSS peak over its idle baseline in each phase against the file
 * size, the verifier's, and the time from upload complete to new head minus the verification
 * itself (verifyLinkFromHead on the same pair, timed separately in a process set up like the verifier).
 * A second contributor then uploads the chain's next key: "upload complete → verdict" is printed
 * for both, the first link uncached (two MSMs: the head's combination is not known yet) and the
 * second on the coordinator's cached path (one MSM: the head was verified by this coordinator).
 *
 * Usage: tsx bench/server-transfer.ts [--power P (default 16) | --circuit rs18|rs17p64]
 *                                     [--chunk-mb M (default: the app's PATCH size)]
 */
import { readFile, rm, stat } from 'node:fs/promises';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { verifyLinkFromHead } from '../core/link-check/verify-link-from-head.ts';
import { circuitChallengeKey } from '../core/link-check/link-challenge.ts';
import { randomBytes } from 'node:crypto';
import { ContributorClient } from '../tests/helpers/contributor-client.ts';
import { chunkSizeFor } from '../web/src/contribute/upload-chunks.ts';
import { benchChain, benchLog as log, isRealShapeName, realShapedChain } from './bench-chain.ts';
import { BENCH_CIRCUIT, benchCeremonyCopy, benchCeremonyTemplate } from './bench-ceremony.ts';
import { RssSampler, startCoordinatorProcess } from './coordinator-process.ts';
import { parseBenchArgs } from './bench-args.ts';

const CIRCUIT = BENCH_CIRCUIT;
const MB = 1024 * 1024;

export interface TransferFigures {
  fileMb: number;
  baselineMb: number;
  uploadSeconds: number;
  /** Size of each tus PATCH. */
  uploadChunkMb: number;
  uploadPeakOverBaselineMb: number;
  toHeadSeconds: number;
  verifySeconds: number;
  overheadSeconds: number;
  /** Upload complete → "contribution uploaded, verifying" (file hash, SQLite, enqueue). */
  toQueuedSeconds: number;
  verifyPeakOverBaselineMb: number;
  /** The embedded verifier process: RSS when idle (curve built) and its peak while verifying. */
  verifierIdleMb: number;
  verifierPeakMb: number;
  downloadSeconds: number;
  downloadPeakOverBaselineMb: number;
  /** Peak of the download minus the RSS it started from (the verifier's memory stays resident). */
  downloadGrowthMb: number;
  /** The second link (head verified by this coordinator, its combination cached): one MSM. */
  cachedToHeadSeconds: number;
  cachedToQueuedSeconds: number;
  /** verifyLinkFromHead with the head's combination cached, timed apart like verifySeconds. */
  cachedVerifySeconds: number;
}

/** verifyLinkFromHead on the first link, then the second with the head's combination cached: median of three each. */
async function timeVerifyLink(chain: {
  z0: string;
  z1: string;
  z2: string;
}): Promise<{ verifySeconds: number; cachedVerifySeconds: number }> {
  const samples: number[] = [];
  await verifyLinkFromHead(chain.z0, chain.z1); // warm-up, as the coordinator's thread is warm after start
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await verifyLinkFromHead(chain.z0, chain.z1);
    samples.push((performance.now() - t) / 1000);
  }
  samples.sort((a, b) => a - b);
  const verifySeconds = samples[1]!;
  const key = circuitChallengeKey(randomBytes(32), CIRCUIT);
  const { combination: head } = await verifyLinkFromHead(chain.z0, chain.z1, { challenge: { key } });
  const cachedSamples: number[] = [];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    await verifyLinkFromHead(chain.z1, chain.z2, { challenge: { key, head } });
    cachedSamples.push((performance.now() - t) / 1000);
  }
  cachedSamples.sort((a, b) => a - b);
  return { verifySeconds, cachedVerifySeconds: cachedSamples[1]! };
}

/** Downloads `url` whole, refused unless it is `expected` bytes. */
async function downloadWhole(url: string, expected: number): Promise<void> {
  const response = await fetch(url);
  if (!response.ok || !response.body) throw new Error(`download failed: ${response.status}`);
  let downloaded = 0;
  for await (const chunk of response.body) downloaded += (chunk as Uint8Array).byteLength;
  if (downloaded !== expected) throw new Error(`downloaded ${downloaded} bytes, expected ${expected}`);
}

/** `target`: a power of two of a generated chain (16), or a real-shaped circuit's name (rs18). */
export async function runServerTransfer(target: number | string, uploadChunkMb?: number): Promise<TransferFigures> {
  const chain =
    typeof target === 'string' && isRealShapeName(target)
      ? await realShapedChain(target)
      : await benchChain(Number(target));
  const template = await benchCeremonyTemplate(chain, String(target));
  const dataDir = await benchCeremonyCopy(template, 'bench-server-run');
  try {
    const fileBytes = (await stat(chain.z1)).size;
    const coordinator = await startCoordinatorProcess(dataDir);
    const rss = new RssSampler(coordinator.pid);
    const verifierReady = await coordinator
      .waitForLog('embedded verifier ready', undefined, 60_000)
      .catch(async (error: unknown) => {
        rss.stop();
        await coordinator.stop(); // a coordinator that never got ready must not outlive the bench
        throw error;
      });
    const verifierPid = verifierReady.pid as number;
    const verifierRss = new RssSampler(verifierPid);
    try {
      rss.mark('idle');
      verifierRss.mark('idle');
      await new Promise((r) => setTimeout(r, 1500));
      const client = new ContributorClient(coordinator.url);
      await client.signInDemo('bench');
      await client.join();
      await client.waitFor((me) => me.status.circuits[0]?.state === 'turn', 'the turn');
      const bytes = await readFile(chain.z1); // the client's memory, not the coordinator's
      rss.mark('upload');
      const uploadStart = Date.now();
      // PATCHes as the browser app cuts them (web/src/contribute/upload-chunks.ts) unless told otherwise.
      const chunkSize = uploadChunkMb ? uploadChunkMb * MB : chunkSizeFor(bytes.byteLength);
      await client.upload(CIRCUIT, bytes, { chunkSize });
      const uploadDone = Date.now();
      rss.mark('verify');
      verifierRss.mark('verify');
      const accepted = await coordinator.waitForLog('contribution accepted', (l) => l.index === 1);
      const queued = await coordinator.waitForLog('contribution uploaded, verifying');
      rss.mark('download');
      verifierRss.mark('download');
      const downloadStart = Date.now();
      await downloadWhole(`${coordinator.url}/api/circuits/${CIRCUIT}/zkeys/1`, fileBytes);
      const downloadDone = Date.now();
      rss.mark('after');
      await new Promise((r) => setTimeout(r, 200));
      rss.stop();
      verifierRss.stop();

      // The second link, by another contributor: the head (z1) was verified here, so its
      // combination is in the cache and the verifier reads only the candidate.
      const second = new ContributorClient(coordinator.url);
      await second.signInDemo('bench-two');
      await second.join();
      await second.waitFor((me) => me.status.circuits[0]?.state === 'turn', 'the second turn');
      const secondBytes = await readFile(chain.z2);
      await second.upload(CIRCUIT, secondBytes, {
        chunkSize: uploadChunkMb ? uploadChunkMb * MB : chunkSizeFor(secondBytes.byteLength),
      });
      const secondDone = Date.now();
      const secondAccepted = await coordinator.waitForLog('contribution accepted', (l) => l.index === 2);
      const secondQueued = await coordinator.waitForLog('contribution uploaded, verifying', (l) => l !== queued);
      await coordinator.stop();

      log('timing verifyLinkFromHead on the same pair (coordinator stopped)');
      const { verifySeconds, cachedVerifySeconds } = await timeVerifyLink(chain);
      const baseline = rss.median('idle');
      const over = (phase: string) => Math.max(0, rss.peak(phase) - baseline) / MB;
      const toHeadSeconds = (accepted.time - uploadDone) / 1000;
      return {
        fileMb: fileBytes / MB,
        baselineMb: baseline / MB,
        uploadSeconds: (uploadDone - uploadStart) / 1000,
        uploadChunkMb: chunkSize / MB,
        uploadPeakOverBaselineMb: over('upload'),
        toHeadSeconds,
        verifySeconds,
        overheadSeconds: toHeadSeconds - verifySeconds,
        toQueuedSeconds: (queued.time - uploadDone) / 1000,
        verifyPeakOverBaselineMb: over('verify'),
        verifierIdleMb: verifierRss.median('idle') / MB,
        verifierPeakMb: verifierRss.peak('verify') / MB,
        downloadSeconds: (downloadDone - downloadStart) / 1000,
        downloadPeakOverBaselineMb: over('download'),
        downloadGrowthMb: rss.growth('download') / MB,
        cachedToHeadSeconds: (secondAccepted.time - secondDone) / 1000,
        cachedToQueuedSeconds: (secondQueued.time - secondDone) / 1000,
        cachedVerifySeconds,
      };
    } finally {
      rss.stop();
      verifierRss.stop();
      await coordinator.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
  }
}

export function printTransfer(target: number | string, f: TransferFigures): void {
  const rows: Array<[string, string]> = [
    [
      typeof target === 'string' && isRealShapeName(target)
        ? `zkey (${target}, real-shaped)`
        : `zkey (2^${target} constraints)`,
      `${f.fileMb.toFixed(1)} MB`,
    ],
    ['coordinator RSS at idle (baseline)', `${f.baselineMb.toFixed(1)} MB`],
    [
      `upload over tus (${f.uploadChunkMb.toFixed(2)} MB PATCHes)`,
      `${f.uploadSeconds.toFixed(2)} s, RSS peak +${f.uploadPeakOverBaselineMb.toFixed(1)} MB over baseline`,
    ],
    [
      'upload complete → verdict, first link (uncached, 2 MSMs)',
      `${f.toHeadSeconds.toFixed(2)} s, coordinator RSS peak ` +
        `+${f.verifyPeakOverBaselineMb.toFixed(1)} MB over baseline`,
    ],
    [
      '  embedded verifier process RSS',
      `${f.verifierIdleMb.toFixed(1)} MB idle, ${f.verifierPeakMb.toFixed(1)} MB peak while verifying`,
    ],
    ['  of which verifyLinkFromHead (timed apart)', `${f.verifySeconds.toFixed(2)} s`],
    ['  overhead (goal < 1 s)', `${f.overheadSeconds.toFixed(2)} s`],
    ['    upload complete → queued (hash, SQLite)', `${f.toQueuedSeconds.toFixed(2)} s`],
    [
      '    queued → head, minus verifyLinkFromHead',
      `${(f.overheadSeconds - f.toQueuedSeconds).toFixed(2)} s (IPC, commit: rename, re-hash, fsync, transcript)`,
    ],
    [
      'upload complete → verdict, second link (cached, 1 MSM)',
      `${f.cachedToHeadSeconds.toFixed(2)} s (goal ≤ 2.5 s at 2^18)`,
    ],
    ['  of which verifyLinkFromHead, head cached (timed apart)', `${f.cachedVerifySeconds.toFixed(2)} s`],
    ['  upload complete → queued (hash, SQLite)', `${f.cachedToQueuedSeconds.toFixed(2)} s`],
    [
      '  rest (IPC, commit: rename, re-hash, fsync, transcript)',
      `${(f.cachedToHeadSeconds - f.cachedVerifySeconds - f.cachedToQueuedSeconds).toFixed(2)} s`,
    ],
    [
      'download of the new head',
      `${f.downloadSeconds.toFixed(2)} s, RSS peak ` +
        `+${f.downloadGrowthMb.toFixed(1)} MB over its start ` +
        `(+${f.downloadPeakOverBaselineMb.toFixed(1)} MB over baseline)`,
    ],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  process.stdout.write(`\nserver transfer\n`);
  for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)}  ${value}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: { power: { type: 'string', default: '16' }, circuit: { type: 'string' }, 'chunk-mb': { type: 'string' } },
  });
  const target = values.circuit ?? Number(values.power);
  printTransfer(target, await runServerTransfer(target, values['chunk-mb'] ? Number(values['chunk-mb']) : undefined));
  await releaseBn128();
}
