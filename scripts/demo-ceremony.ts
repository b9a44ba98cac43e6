/**
 * `npm run demo`: the whole test-network ceremony of the nine circuits from the command line, on
 * this machine with embedded defaults, in a fresh folder (`.demo/`, git-ignored), no server:
 * development ptau (made once, cached), init, one contribution per circuit, finalise with a
 * beacon, audit (the development ptau pinned by its hash). Every step is the same core code the
 * `ceremony` command runs.
 */
import { cp, mkdir, rm, stat, symlink } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { loadCeremonyConfig } from '../core/config/ceremony-config.ts';
import { createDevPtau } from '../core/ptau/dev-ptau.ts';
import { readPtauSummary } from '../core/ptau/ptau-header.ts';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { createProgressRenderer } from '../cli/progress/progress-renderer.ts';
import { contributeLocally } from '../core/ceremony/extend-chain.ts';
import { finaliseCeremony } from '../core/finalise/finalise-ceremony.ts';
import { auditCeremony } from '../core/audit/audit-ceremony.ts';
import { hashFile } from '../core/crypto/file-hash.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { silenceSnarkjsHandleWarnings } from '../core/runtime/snarkjs-warnings.js';

silenceSnarkjsHandleWarnings();
const log = (message: string): void => void process.stdout.write(`${message}\n`);
const projectDir = path.resolve('ceremony-data');
const demoDir = path.resolve('.demo');
const config = await loadCeremonyConfig(projectDir);

if (
  !(await stat(config.ptauPath).then(
    () => true,
    () => false,
  ))
) {
  log(`making the development ptau ${config.ptau} (once; secret is public: test network only)…`);
  await createDevPtau(10, config.ptauPath);
}
log(`ptau: ${config.ptau}, power ${(await readPtauSummary(config.ptauPath)).power}`);

await rm(demoDir, { recursive: true, force: true });
await mkdir(path.join(demoDir, path.dirname(config.ptau)), { recursive: true });
await cp(path.join(projectDir, 'ceremony.json'), path.join(demoDir, 'ceremony.json'));
await cp(path.join(projectDir, 'circuits'), path.join(demoDir, 'circuits'), { recursive: true });
await symlink(config.ptauPath, path.join(demoDir, config.ptau));

const progress = createProgressRenderer(process.stderr).progress;
log(`init ${demoDir}`);
await initCeremony(demoDir, progress);
for (const circuit of config.circuits) {
  const accepted = await contributeLocally(demoDir, circuit.name, 'demo-contributor');
  log(`contributed to ${circuit.name}: contribution hash ${accepted.contributionHash.slice(0, 32)}…`);
}
const beacon = randomBytes(32).toString('hex');
log(`finalise with beacon ${beacon}`);
const final = await finaliseCeremony(demoDir, { beaconHex: beacon, iterationsExp: 10 }, progress);
// The audit trusts no ptau it is not told to: this one is the development ptau made (or found)
// above, so the demo pins it by its own hash, as an auditor of a test network would.
const ptauHash = await hashFile(config.ptauPath);
log(`audit, pinning the development ptau by its BLAKE2b-512 ${ptauHash.slice(0, 16)}…`);
// The auditor's configuration is the checkout's own ceremony.json, which pins every r1cs. Contributed
// from the command line, not through the coordinator's lobby: the ceremony has no queue log.
const report = await auditCeremony(demoDir, undefined, {
  auditorConfig: path.join(projectDir, 'ceremony.json'),
  ptauHash,
  noQueueLog: true,
});
for (const finding of report.findings) log(`  ${finding.subject} ${finding.ok ? 'ok' : 'FAIL'}: ${finding.summary}`);
log(report.ok ? `done: manifest at ${final.manifestPath}` : 'audit FAILED');
await releaseBn128();
process.exitCode = report.ok ? 0 : 1;
