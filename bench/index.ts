/**
 * `npm run bench`: the benchmarks, one after another (never two at once: they time CPU-bound
 * work), each printing its own table.
 *  1. verification  bench/verify-link.ts per power: verifyLink vs verifyFromInit vs snarkjs CLI,
 *                   with the MSM floor (child process per power)
 *  2. transfer      bench/server-transfer.ts: tus upload + download of a 2^P key, coordinator RSS,
 *                   upload complete → new head minus verification
 *  3. lobby         bench/lobby-load.ts: 10,000 waiting contributors polling every 10 s
 *  4. contribution  bench/browser-contribution.ts: a contribution on a 2^P key with snarkjs in Node
 *                   (CLI and API) vs the browser app's Web Worker in headless Chromium
 *  5. startup       bench/startup.ts: `ceremony --help`, verify-link and `ceremony serve` start-up,
 *                   compiled (dist/) vs the sources through tsx
 *
 * Usage: tsx bench/index.ts [--only verify,transfer,lobby,contribution,startup] [--powers 14,16] [--terms K]
 *                           [--transfer-power 16] [--contributors 10000] [--seconds 25]
 *                           [--contribution-power 16]
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { REPO_ROOT } from '../tests/fixtures/ceremony-fixture.ts';
import { printTransfer, runServerTransfer } from './server-transfer.ts';
import { printLobby, runLobbyLoad } from './lobby-load.ts';
import { printBrowserContribution, runBrowserContribution } from './browser-contribution.ts';
import { printStartup, runStartup } from './startup.ts';

const BENCHES = ['verify', 'transfer', 'lobby', 'contribution', 'startup'] as const;
const { values } = parseArgs({
  options: {
    only: { type: 'string', default: BENCHES.join(',') },
    powers: { type: 'string', default: '14' },
    terms: { type: 'string', default: '1' },
    'transfer-power': { type: 'string', default: '16' },
    contributors: { type: 'string', default: '10000' },
    seconds: { type: 'string', default: '25' },
    'contribution-power': { type: 'string', default: '16' },
  },
});
const selected = new Set(values.only.split(',').map((s) => s.trim()));
for (const name of selected) if (!(BENCHES as readonly string[]).includes(name)) throw new Error(`--only: unknown bench "${name}" (known: ${BENCHES.join(', ')})`);

if (selected.has('verify')) {
  for (const power of values.powers.split(',').map(Number)) {
    process.stdout.write(`\nverification at 2^${power}${values.terms === '1' ? '' : `, ${values.terms} terms per left factor`}\n`);
    const run = spawnSync(process.execPath, ['--import', 'tsx', path.join(REPO_ROOT, 'bench', 'verify-link.ts'), '--power', String(power), '--terms', values.terms], { cwd: REPO_ROOT, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`bench/verify-link.ts --power ${power} exited with ${run.status}`);
  }
}
if (selected.has('transfer')) {
  const power = Number(values['transfer-power']);
  printTransfer(power, await runServerTransfer(power));
}
if (selected.has('lobby')) {
  printLobby(await runLobbyLoad(Number(values.contributors), Number(values.seconds), 10));
}
if (selected.has('contribution')) {
  const power = Number(values['contribution-power']);
  printBrowserContribution(power, await runBrowserContribution(power, 1));
}
if (selected.has('startup')) {
  printStartup(await runStartup(5), 5);
}
await releaseBn128();
