/**
 * What `ceremony verify-deployment` costs an auditor, δ-only against `--ceremony` (constants only,
 * then recompiled), each a fresh CLI process (compiled dist/) against the nine verifiers of the
 * test ceremony compiled as its final/compiler.json says and deployed on a local anvil; medians of
 * `--runs`. The only part that grows with the circuits' domain is hashing the final keys against
 * the transcript (the verifiers, their constants and the vkey export depend on the public inputs
 * alone), so it is measured on a file of the largest real final key's size (141 MB) and scaled to
 * the service's nine keys (about 1 GB), against `b2sum` of the same file, its floor.
 *
 * Usage: tsx bench/verify-deployment.ts [--runs 3]
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hashFile } from '../core/crypto/file-hash.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { publishCeremony } from '../core/publish/publish-ceremony.ts';
import { finalisedCeremony, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { startAnvil } from '../tests/helpers/anvil.ts';
import { compileContracts, deployContracts } from '../tests/helpers/solidity.ts';
import { parseBenchArgs } from './bench-args.ts';

const LARGEST_FINAL_KEY_BYTES = 141e6;
const NINE_KEYS_BYTES = 1e9;

const { values } = parseBenchArgs(import.meta.url, { options: { runs: { type: 'string', default: '3' } } });
const runs = Number(values.runs);

function median(list: number[]): number {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

function timed(command: string, args: string[], expectStatus = 0): number {
  const started = performance.now();
  const run = spawnSync(command, args, { cwd: REPO_ROOT, stdio: ['ignore', 'ignore', 'pipe'], encoding: 'utf8' });
  const elapsed = performance.now() - started;
  if (run.status !== expectStatus)
    throw new Error(`${command} ${args.join(' ')} exited with ${run.status}: ${run.stderr}`);
  return elapsed;
}

const work = await mkdtemp(path.join(tmpdir(), 'bench-verify-deployment-'));
const anvil = await startAnvil();
try {
  const fixture = await finalisedCeremony();
  const published = path.join(work, 'published');
  await publishCeremony(fixture.dataDir, published);
  const settings = (
    JSON.parse(await readFile(path.join(published, 'final', 'compiler.json'), 'utf8')) as {
      settings: Record<string, unknown>;
    }
  ).settings;
  const sources: Record<string, string> = {};
  for (const { verifier } of fixture.circuits) {
    sources[`${verifier}.sol`] = await readFile(path.join(published, 'final', `${verifier}.sol`), 'utf8');
  }
  const compiled = compileContracts(sources, settings);
  const verifiers = fixture.circuits.map((c) => c.verifier);
  const addresses = await deployContracts(
    anvil.rpcUrl,
    verifiers.map((v) => compiled.get(`${v}.sol:${v}`)!),
  );
  const verifiersPath = path.join(work, 'verifiers.json');
  await writeFile(verifiersPath, JSON.stringify(Object.fromEntries(verifiers.map((v, i) => [v, addresses[i]]))));
  const manifest = path.join(published, 'final', 'manifest.json');
  const cli = [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'verify-deployment', anvil.rpcUrl, manifest, verifiersPath];
  const rows: Array<[string, number]> = [];
  for (const [what, extra] of [
    ['δ only (the service procedure)', []],
    ['--ceremony --no-recompile (every constant)', ['--ceremony', published, '--no-recompile']],
    ['--ceremony (constants + recompiled code)', ['--ceremony', published]],
  ] as const) {
    const times = Array.from({ length: runs }, () => timed(process.execPath, [...cli, ...extra]));
    rows.push([what, median(times)]);
  }

  const big = path.join(work, 'final-key-sized.bin');
  await writeFile(big, randomBytes(LARGEST_FINAL_KEY_BYTES));
  const hashMs = median(
    await Promise.all(
      Array.from({ length: runs }, async () => {
        const started = performance.now();
        await hashFile(big);
        return performance.now() - started;
      }),
    ),
  );
  const b2sumMs = median(Array.from({ length: runs }, () => timed('b2sum', [big])));

  const table = (cells: string[][]) =>
    cells.map((row) => `  ${row[0]!.padEnd(46)} ${row.slice(1).join('  ')}`).join('\n');
  process.stdout.write(
    `\nverify-deployment of the nine test verifiers on anvil (fresh CLI process each, median of ${runs})\n` +
      table(
        rows.map(([what, ms]) => [what, `${(ms / 1000).toFixed(2)} s`, `${(ms / rows[0]![1]).toFixed(2)}× δ only`]),
      ) +
      `\n\nhashing the final keys against the transcript (the only part that grows with the domain)\n` +
      table([
        [
          `BLAKE2b-512 of a ${LARGEST_FINAL_KEY_BYTES / 1e6} MB file (hashFile)`,
          `${(hashMs / 1000).toFixed(2)} s`,
          `${(LARGEST_FINAL_KEY_BYTES / 1e6 / (hashMs / 1000)).toFixed(0)} MB/s`,
          `${(hashMs / b2sumMs).toFixed(2)}× b2sum`,
        ],
        ['b2sum of the same file (floor)', `${(b2sumMs / 1000).toFixed(2)} s`],
        [
          `scaled to the nine final keys at 2^18 (~${NINE_KEYS_BYTES / 1e9} GB)`,
          `${((hashMs * NINE_KEYS_BYTES) / LARGEST_FINAL_KEY_BYTES / 1000).toFixed(1)} s`,
        ],
      ]) +
      '\n',
  );
} finally {
  await anvil.stop();
  await rm(work, { recursive: true, force: true });
  await releaseBn128();
}
