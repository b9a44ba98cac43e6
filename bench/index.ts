/**
 * `npm run bench`: the benchmarks, one after another (never two at once: they time CPU-bound
 * work), each printing its own table.
 *  1. verification  bench/verify-link.ts per power and per real-shaped circuit (--circuits):
 *                   the MSM floor, verify-link as a CLI process and warm (two MSMs, and one with
 *                   the head cached as in the coordinator), verifyFromInit, snarkjs zkey verify
 *                   (child process per table)
 *  2. transfer      bench/server-transfer.ts: tus upload + download of a 2^P key (or of a
 *                   real-shaped one: --transfer-circuit rs18), coordinator RSS, upload complete →
 *                   verdict for a first (uncached) and a second (cached, one MSM) link
 *  3. lobby         bench/lobby-load.ts: 10,000 waiting contributors polling every 10 s
 *  4. contribution  bench/browser-contribution.ts: a contribution on a 2^P key with snarkjs in Node
 *                   (CLI and API) vs the browser app's Web Worker in headless Chromium; then
 *                   bench/kernel-in-chromium.ts: the page's kernel worker per point against Node's
 *  5. startup       bench/startup.ts: `ceremony --help`, verify-link and `ceremony serve` start-up,
 *                   compiled (dist/) vs the sources through tsx
 *  6. audit         bench/audit.ts: checking contribution 0 vs `snarkjs zkey new` (rs18, rs17p64),
 *                   and `ceremony audit` of nine real-shaped chains of --audit-links contributions
 *                   + beacon, extrapolated to 370 links (child process; minutes)
 *  7. turn          bench/contributor-turn.ts: a contributor's whole turn, the real page in headless
 *                   Chromium against `ceremony serve` on the rs18 key (--turn-circuit / --turn-power),
 *                   straight and through a shaped link (--link DOWN/UP Mbit/s): time, bytes moved,
 *                   browser memory, cores busy, each against its floor (minutes)
 *  8. page-memory   bench/page-memory.ts: the page's own memory during one turn (Chromium over its
 *                   DevTools pipe, no network inspection) on the turn's key (rs18; --turn-circuit /
 *                   --turn-power), above idle and against the key, straight and through the turn's
 *                   link (child processes)
 *  9. receipt       bench/receipt.ts: one paste of a receipts file on the public page, checked
 *                   against the final key of --receipt-circuit (rs18; or --receipt-power P) by
 *                   range requests: the page's own timing and the key bytes fetched, against the
 *                   whole key's download and `snarkjs zkey verify` (--receipt-skip-snarkjs)
 * 10. transfer-garbage  bench/transfer-garbage.ts: what moving 60 MiB down, then up, leaves in a page's
 *                   memory in Chromium, apart from any contribution (what the page's memory grows by)
 * 11. deployment    bench/verify-deployment.ts: `verify-deployment` δ-only against --ceremony (constants,
 *                   recompiled code) on anvil, and hashing a final key's size against b2sum (seconds)
 * 12. hostile       bench/hostile-uploads.ts: what a hostile turn holder's uploads cost the coordinator
 *                   (a garbage record, a bad last point, PATCHes at the end of a finishing upload)
 *                   against an honest delta's intake and check, at --hostile-circuit (rs18) or --hostile-power
 * 13. presence      bench/queue-presence.ts: a whole ceremony of the nine test circuits by 60 terminal
 *                   contributors of whom a fifth go away (half come back), today's lobby against
 *                   presence: each circuit's idle time, the audit's fairness check (child process; minutes)
 * 14. coordinator   bench/coordinator-work.ts: `ceremony init` (the kernel) against `snarkjs zkey new`,
 *                   and `ceremony finalise` against today's finalise before it, on --coordinator-circuit
 *                   (rs18): times, peak RSS, the keys compared byte for byte (child processes; minutes)
 * 15. routes        bench/route-costs.ts: the worst request of each route against the coordinator (CPU, RSS,
 *                   descriptors), downloads of --routes-circuit's key (rs18) or --routes-power's, and an
 *                   address's held downloads until the minimum transfer rate closes them (minutes)
 * 16. hostile-lobby bench/hostile-lobby.ts: the nine test circuits by 20 honest terminal contributors while
 *                   5 hostile accounts that joined first never contribute (never take, heartbeat without
 *                   uploading, leave and rejoin): each circuit's idle time (child process; minutes)
 * 17. queue-log-replay  bench/queue-log-replay.ts: what replaying a queue log costs the auditor, an honest-shaped
 *                   log against logs crafted to make a queue-walking replay quadratic (200k entries each):
 *                   entries/s of the audit and of the replay alone, peak RSS (child processes; a minute)
 * 18. audit-length  bench/audit-chain-length.ts: `ceremony audit` of one rs18 chain of 2 and of 20
 *                   contributions (the final-key check, the default), checked and remembered, against
 *                   each other and `snarkjs zkey verify` of the final key (child process; minutes)
 * 19. rs22          bench/rs22.ts, only when asked (--only rs22): the 2^22 ceremony end to end, stage by
 *                   stage against each floor, every process's peak RSS (an hour; its fixtures cached,
 *                   about an hour more the first time); --work DIR for its 40 GB of folders
 *
 * Usage: tsx bench/index.ts [--only verify,transfer,lobby,contribution,startup,audit,turn,page-memory,receipt,
 *                                  transfer-garbage,deployment,hostile,presence,coordinator,routes,hostile-lobby,
 *                                  queue-log-replay,audit-length,rs22]
 *                           [--hostile-circuit rs18 | --hostile-power P] [--routes-circuit rs18 | --routes-power P]
 *                           [--coordinator-circuit rs18] [--work DIR]
 *                           [--audit-links 5]
 *                           [--powers 14,16] [--terms K]
 *                           [--receipt-circuit rs18 | --receipt-power P] [--receipt-skip-snarkjs]
 *                           [--circuits rs17p64,rs18] [--runs N]
 *                           [--transfer-power 16 | --transfer-circuit rs18] [--contributors 10000] [--seconds 25]
 *                           [--contribution-power 16]
 *                           [--turn-circuit rs18 | --turn-power P] [--link 100/20] [--turn-runs 1]
 *                           [--turn-client browser|cli|cli-whole-key] [--turn-versus cli] [--turn-json FILE]
 */
import { spawnSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { printTransfer, runServerTransfer } from './server-transfer.ts';
import { isRealShapeName, REAL_SHAPE_NAMES } from './bench-chain.ts';
import { printLobby, runLobbyLoad } from './lobby-load.ts';
import { printBrowserContribution, runBrowserContribution } from './browser-contribution.ts';
import { printKernelInChromium, runKernelInChromium } from './kernel-in-chromium.ts';
import { printStartup, runStartup } from './startup.ts';
import {
  printContributorTurn,
  runContributorTurnBench,
  turnBenchOptions,
  writeTurnFigures,
} from './contributor-turn.ts';
import { printReceiptBench, runReceiptBench } from './receipt.ts';
import { runHostileUploadsBench } from './hostile-uploads.ts';
import { runRouteCostsBench } from './route-costs.ts';
import { printCoordinatorWork, runCoordinatorWork } from './coordinator-work.ts';
import { runRs22 } from './rs22.ts';
import { printWholeCeremony } from './whole-ceremony.ts';
import { parseLink } from '../tests/helpers/shaped-proxy.ts';
import { parseBenchArgs } from './bench-args.ts';

const BENCHES = [
  'verify',
  'transfer',
  'lobby',
  'contribution',
  'startup',
  'audit',
  'turn',
  'page-memory',
  'receipt',
  'transfer-garbage',
  'deployment',
  'hostile',
  'presence',
  'coordinator',
  'routes',
  'hostile-lobby',
  'queue-log-replay',
  'audit-length',
] as const;
/** Benches run only when named in --only (an hour or more each). */
const ON_REQUEST = ['rs22'] as const;
const { values } = parseBenchArgs(import.meta.url, {
  options: {
    only: { type: 'string', default: BENCHES.join(',') },
    powers: { type: 'string', default: '14' },
    terms: { type: 'string', default: '1' },
    /**
     * Real-shaped circuits (bench-chain.ts REAL_SHAPES) verified after the powers; none by default (minutes to
     * build).
     */
    circuits: { type: 'string', default: '' },
    runs: { type: 'string', default: '3' },
    'transfer-circuit': { type: 'string' },
    'transfer-power': { type: 'string', default: '16' },
    contributors: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '25' },
    'contribution-power': { type: 'string', default: '16' },
    'audit-links': { type: 'string', default: '5' },
    'turn-circuit': { type: 'string' },
    'turn-power': { type: 'string' },
    link: { type: 'string', default: '100/20' },
    'turn-runs': { type: 'string', default: '1' },
    'turn-client': { type: 'string', default: 'browser' },
    'turn-versus': { type: 'string' },
    'turn-json': { type: 'string' },
    'receipt-circuit': { type: 'string', default: 'rs18' },
    'receipt-power': { type: 'string' },
    'receipt-skip-snarkjs': { type: 'boolean', default: false },
    'hostile-circuit': { type: 'string', default: 'rs18' },
    'hostile-power': { type: 'string' },
    'routes-circuit': { type: 'string', default: 'rs18' },
    'routes-power': { type: 'string' },
    'coordinator-circuit': { type: 'string', default: 'rs18' },
    work: { type: 'string' },
  },
});
const selected = new Set(values.only.split(',').map((s) => s.trim()));
for (const name of selected)
  if (![...BENCHES, ...ON_REQUEST].includes(name as never))
    throw new Error(`--only: unknown bench "${name}" (known: ${[...BENCHES, ...ON_REQUEST].join(', ')})`);
// Checked before any bench runs, not after minutes of the others.
const turnKey = { circuit: values['turn-circuit'], power: values['turn-power'] };
const turnOptions = selected.has('turn')
  ? turnBenchOptions({
      ...turnKey,
      link: values.link,
      runs: values['turn-runs'],
      client: values['turn-client'],
      versus: values['turn-versus'],
    })
  : undefined;
// The page's memory is measured on the turn's key: the two figures compare.
const pageMemoryTarget = selected.has('page-memory') ? turnBenchOptions(turnKey).target : undefined;
// Floors (Node's kernel) and references (snarkjs in Node) both move with V8's version: say which.
process.stdout.write(`node ${process.version} (V8 ${process.versions.v8}), ${availableParallelism()} cores\n`);

if (selected.has('verify')) {
  for (const power of values.powers
    .split(',')
    .filter((p) => p.trim() !== '')
    .map(Number)) {
    process.stdout.write(
      `\nverification at 2^${power}${values.terms === '1' ? '' : `, ${values.terms} terms per left factor`}\n`,
    );
    const run = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(REPO_ROOT, 'bench', 'verify-link.ts'),
        '--power',
        String(power),
        '--terms',
        values.terms,
        '--runs',
        values.runs,
      ],
      { cwd: REPO_ROOT, stdio: 'inherit' },
    );
    if (run.status !== 0) throw new Error(`bench/verify-link.ts --power ${power} exited with ${run.status}`);
  }
  for (const circuit of values.circuits
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    if (!isRealShapeName(circuit))
      throw new Error(`--circuits: unknown circuit "${circuit}" (known: ${REAL_SHAPE_NAMES.join(', ')})`);
    process.stdout.write(`\nverification of ${circuit} (real-shaped)\n`);
    const run = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'verify-link.ts'), '--circuit', circuit, '--runs', values.runs],
      { cwd: REPO_ROOT, stdio: 'inherit' },
    );
    if (run.status !== 0) throw new Error(`bench/verify-link.ts --circuit ${circuit} exited with ${run.status}`);
  }
}
if (selected.has('transfer')) {
  const circuit = values['transfer-circuit'];
  if (circuit !== undefined && !isRealShapeName(circuit))
    throw new Error(`--transfer-circuit: unknown circuit "${circuit}" (known: ${REAL_SHAPE_NAMES.join(', ')})`);
  const target = circuit ?? Number(values['transfer-power']);
  printTransfer(target, await runServerTransfer(target));
}
if (selected.has('lobby')) {
  printLobby(await runLobbyLoad(Number(values.contributors), Number(values.seconds), 10));
}
if (selected.has('contribution')) {
  const power = Number(values['contribution-power']);
  printBrowserContribution(power, await runBrowserContribution(power, 1));
  printKernelInChromium(await runKernelInChromium());
}
if (selected.has('startup')) {
  printStartup(await runStartup(5), 5);
}
if (selected.has('deployment')) {
  const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'verify-deployment.ts')], {
    cwd: REPO_ROOT,
    stdio: 'inherit',
  });
  if (run.status !== 0) throw new Error(`bench/verify-deployment.ts exited with ${run.status}`);
}
if (selected.has('audit')) {
  const run = spawnSync(
    process.execPath,
    ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'audit.ts'), '--links', values['audit-links']],
    { cwd: REPO_ROOT, stdio: 'inherit' },
  );
  if (run.status !== 0) throw new Error(`bench/audit.ts exited with ${run.status}`);
}
if (turnOptions) {
  const figures = await runContributorTurnBench(turnOptions);
  printContributorTurn(figures);
  if (values['turn-json']) await writeTurnFigures(values['turn-json'], figures);
}
if (pageMemoryTarget !== undefined) {
  const key =
    typeof pageMemoryTarget === 'number' ? ['--power', String(pageMemoryTarget)] : ['--circuit', pageMemoryTarget];
  const script = path.join(REPO_ROOT, 'bench', 'page-memory.ts');
  for (const args of [key, [...key, '--link', values.link]]) {
    process.stdout.write('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', script, ...args], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`bench/page-memory.ts ${args.join(' ')} exited with ${run.status}`);
  }
}
if (selected.has('receipt')) {
  const target = values['receipt-power'] ?? values['receipt-circuit'];
  printReceiptBench(await runReceiptBench(target, Number(values.runs), !values['receipt-skip-snarkjs']));
}
if (selected.has('transfer-garbage')) {
  process.stdout.write('\n');
  const script = path.join(REPO_ROOT, 'bench', 'transfer-garbage.ts');
  const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`bench/transfer-garbage.ts exited with ${run.status}`);
}
if (selected.has('hostile')) {
  await runHostileUploadsBench(values['hostile-power'] ? Number(values['hostile-power']) : values['hostile-circuit']);
}
if (selected.has('presence')) {
  const script = path.join(REPO_ROOT, 'bench', 'queue-presence.ts');
  const run = spawnSync(process.execPath, ['--import', 'tsx', script], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`bench/queue-presence.ts exited with ${run.status}`);
}
if (selected.has('coordinator')) {
  printCoordinatorWork(await runCoordinatorWork(values['coordinator-circuit'], true));
}
if (selected.has('routes')) {
  await runRouteCostsBench(values['routes-power'] ? Number(values['routes-power']) : values['routes-circuit']);
}
/** Runs a bench that is its own script (it starts and stops its own processes), as a child process. */
function runBenchScript(script: string): void {
  const file = path.join(REPO_ROOT, 'bench', script);
  const run = spawnSync(process.execPath, ['--import', 'tsx', file], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (run.status !== 0) throw new Error(`bench/${script} exited with ${run.status}`);
}
if (selected.has('hostile-lobby')) runBenchScript('hostile-lobby.ts');
if (selected.has('queue-log-replay')) runBenchScript('queue-log-replay.ts');
if (selected.has('audit-length')) runBenchScript('audit-chain-length.ts');
if (selected.has('rs22')) {
  printWholeCeremony(await runRs22({ work: values.work, link: parseLink(values.link) }));
}
await releaseBn128();
