/**
 * A ceremony survives `kill -9` of the CLI at any moment of a contribution: afterwards the
 * transcript verifies, every head it names is on disk with the recorded hash, the stale lock of
 * the dead process is taken over, and the ceremony goes on and audits clean.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rm } from 'node:fs/promises';
import path from 'node:path';
import { newCeremonyDir, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { auditCeremony } from '../../core/audit/audit-ceremony.ts';
import { runCli } from '../helpers/run-cli.ts';

let dataDir: string;

before(async () => {
  dataDir = await newCeremonyDir();
  await initCeremony(dataDir);
});

after(async () => {
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

function contributeAndKillAfter(ms: number): Promise<void> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'contribute', '--all', '--name', 'victim', '--data', dataDir], {
      stdio: 'ignore',
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), ms);
    child.on('close', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

async function assertConsistent(): Promise<number> {
  const state = await openCeremony(dataDir); // throws if the transcript is torn or its chain broken
  let links = 0;
  for (const chain of state.chains.values()) {
    assert.ok(chain.head, `${chain.circuit.name} lost its head`);
    assert.equal(await hashFile(state.paths.zkeyPath(chain.circuit.name, chain.headIndex)), chain.head.fileHash, `${chain.circuit.name} head file differs from the transcript`);
    links += chain.headIndex;
  }
  return links;
}

test('kill -9 at many points of a contribution run leaves a consistent ceremony', async () => {
  let links = await assertConsistent();
  // Spread over the ~2-4 s a run takes here, so kills land in snarkjs, in verification, in the
  // rename of the zkey and in the transcript write.
  for (const delay of [150, 400, 650, 900, 1150, 1400, 1650, 1900, 2200, 2600]) {
    await contributeAndKillAfter(delay);
    const now = await assertConsistent();
    assert.ok(now >= links, 'an accepted contribution was lost');
    links = now;
  }
  assert.ok(links > 0 && links < 9 * 10, `kills should land between contributions (${links} links committed)`);
  const resumed = await runCli(['contribute', 'register', '--name', 'survivor', '--data', dataDir]);
  assert.equal(resumed.code, 0, `the ceremony must go on after the crashes: ${resumed.stderr}`);
  assert.ok((await assertConsistent()) > links);
  const report = await auditCeremony(dataDir);
  assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
});
