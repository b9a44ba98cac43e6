/**
 * A ceremony survives `kill -9` of the CLI at any moment of a contribution: afterwards the
 * transcript verifies, every head it names is on disk with the recorded hash, the stale lock of
 * the dead process is taken over, and the ceremony goes on and audits clean.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { auditorConfigOf, devPtauHash, newCeremonyDir, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { hashFile } from '../../core/crypto/file-hash.ts';
import { auditCeremony } from '../../core/audit/audit-ceremony.ts';
import { CEREMONY_BIN, runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';

let dataDir: string;
/**
 * Two circuits: a kill between the two contributions of a run is a kill mid-run as one between any
 * two of nine is, and each run, killed or whole, and the closing audit cost two ninths of the nine's.
 */
const CIRCUITS = TWO_CIRCUITS;

before(async () => {
  dataDir = await newCeremonyDir({ init: true, circuits: CIRCUITS });
});

after(() => cleanUp(dataDir));

interface Run {
  code: number | null;
  stderr: string;
  /** From its start to its first line on stdout: its first circuit accepted (the line follows the commit). */
  firstAcceptedMs: number | undefined;
  runMs: number;
}

/**
 * `ceremony contribute --all` on the folder as `name`, killed (SIGKILL) `kill.ms` after its start, or
 * after its first circuit was accepted when `kill.afterFirstAccepted` is set.
 */
function contributeRun(name: string, kill?: { ms: number; afterFirstAccepted: boolean }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const args = [CEREMONY_BIN, 'contribute', '--all', '--name', name, '--data', dataDir];
    const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let firstAcceptedMs: number | undefined;
    let timer: NodeJS.Timeout | undefined;
    const killAfter = (ms: number): void => void (timer = setTimeout(() => child.kill('SIGKILL'), ms));
    if (kill && !kill.afterFirstAccepted) killAfter(kill.ms);
    child.stdout.on('data', () => {
      if (firstAcceptedMs !== undefined) return;
      firstAcceptedMs = performance.now() - started;
      if (kill?.afterFirstAccepted) killAfter(kill.ms);
    });
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, firstAcceptedMs, runMs: performance.now() - started });
    });
  });
}

async function assertConsistent(): Promise<number> {
  const state = await openCeremony(dataDir); // throws if the transcript is torn or its chain broken
  let links = 0;
  for (const chain of state.chains.values()) {
    assert.ok(chain.head, `${chain.circuit.name} lost its head`);
    assert.equal(
      await hashFile(state.paths.zkeyPath(chain.circuit.name, chain.headIndex)),
      chain.head.fileHash,
      `${chain.circuit.name} head file differs from the transcript`,
    );
    links += chain.headIndex;
  }
  return links;
}

test('kill -9 at many points of a contribution run leaves a consistent ceremony', async () => {
  // One whole run first, timed: the kills below are placed at fractions of it, so they land in
  // snarkjs, in verification, in the rename of the zkey and in the transcript write however fast
  // (or loaded) the machine is, rather than at fixed times that a busy CI runner may never reach.
  // A point after its first acceptance is timed from the killed run's own first acceptance: the
  // start of a command (Node, the app, the curve) is most of a run of two circuits and varies the
  // most, and would otherwise carry the kills meant for the second circuit's work past its end.
  const calibration = await contributeRun('calibration');
  assert.equal(calibration.code, 0, calibration.stderr);
  const { runMs, firstAcceptedMs: firstMs } = calibration;
  assert.ok(firstMs !== undefined, 'the calibration run printed no accepted contribution');
  let links = await assertConsistent();
  assert.equal(links, CIRCUITS.length);
  let interruptedMidRun = 0;
  for (const fraction of [0.05, 0.15, 0.25, 0.35, 0.45, 0.55, 0.65, 0.75, 0.85, 0.95]) {
    const at = Math.round(fraction * runMs);
    await contributeRun(
      'victim',
      at < firstMs ? { ms: at, afterFirstAccepted: false } : { ms: at - firstMs, afterFirstAccepted: true },
    );
    const now = await assertConsistent();
    assert.ok(now >= links, 'an accepted contribution was lost');
    if (now - links > 0 && now - links < CIRCUITS.length) interruptedMidRun++;
    links = now;
  }
  assert.ok(
    interruptedMidRun > 0,
    `no kill landed between two contributions of a run (whole run ${runMs.toFixed(0)} ms, ${links} links)`,
  );
  const resumed = await runCli(['contribute', 'register', '--name', 'survivor', '--data', dataDir]);
  assert.equal(resumed.code, 0, `the ceremony must go on after the crashes: ${resumed.stderr}`);
  assert.ok((await assertConsistent()) > links);
  const report = await auditCeremony(dataDir, undefined, {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(dataDir),
    ptauHash: await devPtauHash(),
    inProgress: true,
  });
  assert.equal(report.ok, true, JSON.stringify(report.findings.filter((f) => !f.ok)));
});
