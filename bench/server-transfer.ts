/**
 * Server transfer: one contribution of a 2^P-constraint key (default 2^16) uploaded over tus by a
 * demo contributor, verified and committed, then the new head downloaded, while the coordinator
 * (its own process) and its embedded verifier (a child process) have their RSS sampled every
 * 20 ms. Prints the coordinator's RSS peak over its idle baseline in each phase against the file
 * size, the verifier's, and the time from upload complete to new head minus the verification
 * itself (verifyLink on the same pair, timed separately in a process set up like the verifier).
 *
 * Usage: tsx bench/server-transfer.ts [--power P (default 16)] [--chunk-mb M (default: the app's PATCH size)]
 */
import { cp, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { ceremonyPaths } from '../core/chain/ceremony-paths.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { verifyLink } from '../core/verify/verify-link.ts';
import { FIXTURE_CACHE } from '../tests/fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../tests/helpers/contributor-client.ts';
import { chunkSizeFor } from '../web/src/contribute/upload-chunks.ts';
import { benchChain, benchLog as log, type BenchChain } from './bench-chain.ts';
import { RssSampler, startCoordinatorProcess } from './coordinator-process.ts';

const CIRCUIT = 'mul';
const MB = 1024 * 1024;
const exists = (p: string): Promise<boolean> => stat(p).then(() => true, () => false);

/** An initialised one-circuit test-network ceremony on the bench chain, cached as a template. */
async function ceremonyTemplate(chain: BenchChain): Promise<string> {
  const template = path.join(FIXTURE_CACHE, `bench-server-${chain.power}`);
  if (await exists(path.join(template, 'ready'))) return template;
  await rm(template, { recursive: true, force: true });
  await mkdir(path.join(template, 'circuits'), { recursive: true });
  await mkdir(path.join(template, 'ptau'), { recursive: true });
  await cp(chain.r1cs, path.join(template, 'circuits', `${CIRCUIT}.r1cs`));
  await symlink(chain.ptau, path.join(template, 'ptau', 'dev.ptau'));
  const config = {
    id: `bench-server-${chain.power}`,
    title: 'server transfer benchmark',
    testNetwork: true,
    ptau: 'ptau/dev.ptau',
    circuits: [{ name: CIRCUIT, verifier: 'VerifierMul', publicInputs: 12, r1cs: `circuits/${CIRCUIT}.r1cs` }],
  };
  await writeFile(path.join(template, 'ceremony.json'), JSON.stringify(config, null, 2));
  log(`initialising the benchmark ceremony (snarkjs zkey new at 2^${chain.power})`);
  await initCeremony(template);
  const z0 = ceremonyPaths(template).zkeyPath(CIRCUIT, 0);
  // zkey new is deterministic, so the chain's z1 is a valid next link on this head too.
  if (!(await readFile(z0)).equals(await readFile(chain.z0))) throw new Error('contribution 0 differs from the bench chain; z1 would not link');
  await writeFile(path.join(template, 'ready'), '');
  return template;
}

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
}

export async function runServerTransfer(power: number, uploadChunkMb?: number): Promise<TransferFigures> {
  const chain = await benchChain(power);
  const template = await ceremonyTemplate(chain);
  // Not under .fixture-cache: the coordinator serves zkeys with express's sendFile({ dotfiles:
  // 'deny' }), which refuses any path with a dot-folder in it (403).
  const dataDir = await mkdtemp(path.join(tmpdir(), 'bench-server-run-'));
  try {
    await cp(template, dataDir, { recursive: true, verbatimSymlinks: true });
    const fileBytes = (await stat(chain.z1)).size;
    const coordinator = await startCoordinatorProcess(dataDir);
    const rss = new RssSampler(coordinator.pid);
    const verifierPid = (await coordinator.waitForLog('embedded verifier ready', undefined, 60_000)).pid as number;
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
      const accepted = await coordinator.waitForLog('contribution accepted');
      const queued = await coordinator.waitForLog('contribution uploaded, verifying');
      rss.mark('download');
      verifierRss.mark('download');
      const downloadStart = Date.now();
      const response = await fetch(`${coordinator.url}/api/circuits/${CIRCUIT}/zkeys/1`);
      if (!response.ok || !response.body) throw new Error(`download failed: ${response.status}`);
      let downloaded = 0;
      for await (const chunk of response.body) downloaded += (chunk as Uint8Array).byteLength;
      const downloadDone = Date.now();
      if (downloaded !== fileBytes) throw new Error(`downloaded ${downloaded} bytes, expected ${fileBytes}`);
      rss.mark('after');
      await new Promise((r) => setTimeout(r, 200));
      rss.stop();
      verifierRss.stop();
      await coordinator.stop();

      log('timing verifyLink on the same pair (coordinator stopped)');
      const samples: number[] = [];
      await verifyLink(chain.z0, chain.z1); // warm-up, as the coordinator's thread is warm after start
      for (let i = 0; i < 3; i++) {
        const t = performance.now();
        await verifyLink(chain.z0, chain.z1);
        samples.push((performance.now() - t) / 1000);
      }
      samples.sort((a, b) => a - b);
      const verifySeconds = samples[1]!;
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

export function printTransfer(power: number, f: TransferFigures): void {
  const rows: Array<[string, string]> = [
    [`zkey (2^${power} constraints)`, `${f.fileMb.toFixed(1)} MB`],
    ['coordinator RSS at idle (baseline)', `${f.baselineMb.toFixed(1)} MB`],
    [`upload over tus (${f.uploadChunkMb.toFixed(2)} MB PATCHes)`, `${f.uploadSeconds.toFixed(2)} s, RSS peak +${f.uploadPeakOverBaselineMb.toFixed(1)} MB over baseline`],
    ['upload complete → new head', `${f.toHeadSeconds.toFixed(2)} s, coordinator RSS peak +${f.verifyPeakOverBaselineMb.toFixed(1)} MB over baseline`],
    ['  embedded verifier process RSS', `${f.verifierIdleMb.toFixed(1)} MB idle, ${f.verifierPeakMb.toFixed(1)} MB peak while verifying`],
    ['  of which verifyLink (timed apart)', `${f.verifySeconds.toFixed(2)} s`],
    ['  overhead (goal < 1 s)', `${f.overheadSeconds.toFixed(2)} s`],
    ['    upload complete → queued (hash, SQLite)', `${f.toQueuedSeconds.toFixed(2)} s`],
    ['    queued → head, minus verifyLink', `${(f.overheadSeconds - f.toQueuedSeconds).toFixed(2)} s (IPC, commit: rename, re-hash, fsync, transcript)`],
    ['download of the new head', `${f.downloadSeconds.toFixed(2)} s, RSS peak +${f.downloadGrowthMb.toFixed(1)} MB over its start (+${f.downloadPeakOverBaselineMb.toFixed(1)} MB over baseline)`],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  process.stdout.write(`\nserver transfer\n`);
  for (const [name, value] of rows) process.stdout.write(`${name.padEnd(width)}  ${value}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseArgs({ options: { power: { type: 'string', default: '16' }, 'chunk-mb': { type: 'string' } } });
  const power = Number(values.power);
  printTransfer(power, await runServerTransfer(power, values['chunk-mb'] ? Number(values['chunk-mb']) : undefined));
  await releaseBn128();
}
