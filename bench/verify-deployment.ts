/**
 * What `ceremony verify-deployment` costs an auditor, δ-only against `--ceremony` (constants only,
 * then recompiled), each a fresh CLI process (compiled dist/) against the nine verifiers of the
 * test ceremony compiled as its final/compiler.json says and deployed on a local anvil; medians of
 * `--runs`. The only part that grows with the circuits' domain is hashing the final keys against
 * the transcript (the verifiers, their constants and the vkey export depend on the public inputs
 * alone), so it is measured on a file of the largest real final key's size (141 MB) and scaled to
 * the service's nine keys (about 1 GB), against `b2sum` of the same file, its floor.
 *
 * `--baseline CHECKOUT --baseline-data DIR` times another checkout's built CLI (its bin/ceremony.js)
 * on its own finalised ceremony (DIR, e.g. that checkout's test fixture: an older transcript format
 * is not read by a newer CLI, nor the reverse), published by it and deployed on the same anvil, runs
 * interleaved with this one's, for a before/after ratio in one run; a checkout from before
 * `--constants-only` existed is given its old name for it, `--no-recompile`.
 *
 * Usage: tsx bench/verify-deployment.ts [--runs 3] [--baseline CHECKOUT --baseline-data DIR]
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { hashFile } from '../core/crypto/file-hash.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { finalisedCeremony, REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { startAnvil } from '../tests/helpers/anvil.ts';
import { compileContracts, deployContracts } from '../tests/helpers/solidity.ts';
import { parseBenchArgs } from './bench-args.ts';

const LARGEST_FINAL_KEY_BYTES = 141e6;
const NINE_KEYS_BYTES = 1e9;

const { values } = parseBenchArgs(import.meta.url, {
  options: {
    runs: { type: 'string', default: '3' },
    baseline: { type: 'string' },
    'baseline-data': { type: 'string' },
  },
});
const runs = Number(values.runs);
const baselineBin = values.baseline === undefined ? undefined : path.resolve(values.baseline, 'bin', 'ceremony.js');
if (baselineBin !== undefined && !existsSync(baselineBin)) throw new Error(`--baseline: no ${baselineBin}`);
if ((baselineBin === undefined) !== (values['baseline-data'] === undefined))
  throw new Error('--baseline and --baseline-data go together');

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

/** Publishes `dataDir` with the CLI `bin`, deploys its verifiers as its compiler record says; the CLI's arguments. */
async function deployCeremony(bin: string, dataDir: string, into: string, rpcUrl: string): Promise<string[]> {
  const published = path.join(into, 'published');
  const publish = spawnSync(process.execPath, [bin, 'publish', dataDir, published], { encoding: 'utf8' });
  if (publish.status !== 0) throw new Error(`publish with ${bin}: ${publish.stderr}`);
  const settings = (
    JSON.parse(await readFile(path.join(published, 'final', 'compiler.json'), 'utf8')) as {
      settings: Record<string, unknown>;
    }
  ).settings;
  const manifest = JSON.parse(await readFile(path.join(published, 'final', 'manifest.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const verifiers = Object.keys(manifest).filter((name) => name.startsWith('Verifier'));
  const sources: Record<string, string> = {};
  for (const verifier of verifiers) {
    sources[`${verifier}.sol`] = await readFile(path.join(published, 'final', `${verifier}.sol`), 'utf8');
  }
  const compiled = compileContracts(sources, settings);
  const addresses = await deployContracts(
    rpcUrl,
    verifiers.map((v) => compiled.get(`${v}.sol:${v}`)!),
  );
  const verifiersPath = path.join(into, 'verifiers.json');
  await writeFile(verifiersPath, JSON.stringify(Object.fromEntries(verifiers.map((v, i) => [v, addresses[i]]))));
  return [rpcUrl, path.join(published, 'final', 'manifest.json'), verifiersPath, '--ceremony', published];
}

const work = await mkdtemp(path.join(tmpdir(), 'bench-verify-deployment-'));
const anvil = await startAnvil();
try {
  const fixture = await finalisedCeremony();
  const ownBin = path.join(REPO_ROOT, 'bin', 'ceremony.js');
  const [rpcUrl, manifest, verifiersPath, , published] = await deployCeremony(
    ownBin,
    fixture.dataDir,
    await mkdtemp(path.join(work, 'own-')),
    anvil.rpcUrl,
  );
  const baselineArgs =
    baselineBin === undefined
      ? undefined
      : await deployCeremony(
          baselineBin,
          path.resolve(values['baseline-data']!),
          await mkdtemp(path.join(work, 'baseline-')),
          anvil.rpcUrl,
        );
  const cli = [ownBin, 'verify-deployment', rpcUrl!, manifest!, verifiersPath!];
  const baselineCli = baselineArgs && [baselineBin!, 'verify-deployment', ...baselineArgs.slice(0, 3)];
  const baselineKnowsConstantsOnly =
    baselineCli !== undefined &&
    spawnSync(process.execPath, [baselineBin!, 'verify-deployment', '--help'], { encoding: 'utf8' }).stdout.includes(
      '--constants-only',
    );
  const rows: Array<[string, number, number | undefined]> = [];
  for (const [what, extra] of [
    ['δ only (the service procedure)', []],
    ['--ceremony --constants-only (every constant)', ['--ceremony', published!, '--constants-only']],
    ['--ceremony (constants + recompiled code)', ['--ceremony', published!]],
  ] as const) {
    const baselineExtra = extra.map((arg) =>
      arg === published
        ? baselineArgs![4]!
        : arg === '--constants-only' && !baselineKnowsConstantsOnly
          ? '--no-recompile'
          : arg,
    );
    const times: number[] = [];
    const baselineTimes: number[] = [];
    for (let run = 0; run < runs; run += 1) {
      times.push(timed(process.execPath, [...cli, ...extra]));
      if (baselineCli) baselineTimes.push(timed(process.execPath, [...baselineCli, ...baselineExtra]));
    }
    rows.push([what, median(times), baselineCli ? median(baselineTimes) : undefined]);
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
        rows.map(([what, ms, baselineMs]) => [
          what,
          `${(ms / 1000).toFixed(2)} s`,
          `${(ms / rows[0]![1]).toFixed(2)}× δ only`,
          ...(baselineMs === undefined
            ? []
            : [`baseline ${(baselineMs / 1000).toFixed(2)} s`, `${(ms / baselineMs).toFixed(2)}× baseline`]),
        ]),
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
