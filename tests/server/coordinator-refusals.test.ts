/**
 * The coordinator's actions refused at the wrong moment, over HTTP against a real coordinator
 * (embedded verifier): finalising an open ceremony, joining a closed one, a phase change the phase
 * table has no move for (closed → paused, finalised → open), finalising while a turn
 * that began before the close is still running (its contribution is then accepted, not cut off),
 * and changing the phase or finalising again while a finalisation runs. A coordinator stopped
 * mid-finalisation comes back closed, and says so; finalising is a phase seen over HTTP while it
 * runs. Then the finalisation itself completes. Also: a coordinator that cannot listen on its port says so and leaves
 * nothing running behind it.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { copyCeremony, TEST_BEACON, TEST_BEACON_ITERATIONS, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { ceremonyPaths } from '../../core/data-folder/ceremony-paths.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';

const TOKEN = 'coordinator-token-for-refusal-tests';
let coordinator: TestCoordinator;
let dataDir: string;

before(async () => {
  // Two circuits: one contributed to before the close, the other's turn running through it. A
  // finalisation needs a contribution on every chain; two chains show every refusal, for a quarter
  // of the nine's contributions and final verifications.
  coordinator = await startTestCoordinator({ env: { COORDINATOR_TOKEN: TOKEN }, ceremony: { circuits: TWO_CIRCUITS } });
  dataDir = coordinator.dataDir;
});

after(() => coordinator?.close());

function refusedWith(status: number, code: string): (error: unknown) => boolean {
  return (error) => {
    assert.ok(error instanceof HttpError, String(error));
    assert.equal(error.status, status, error.message);
    assert.equal(error.code, code, error.message);
    return true;
  };
}

const finaliseBody = { beacon: TEST_BEACON, iterations: TEST_BEACON_ITERATIONS };

test('finalise and phase changes are refused while they would cut off or race with work', async () => {
  let admin = new ContributorClient(coordinator.url);
  await admin.signInCoordinator(TOKEN);
  const alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  await alice.join();
  // Every circuit but the last gets its contribution (finalise needs one per chain); the last
  // turn is still running when the ceremony closes.
  const circuits = coordinator.config.circuits.map((c) => c.name);
  const last = circuits.at(-1)!;
  for (const circuit of circuits.slice(0, -1)) await alice.takeTurn(circuit);
  await alice.waitFor(
    (me) => me.status.circuits.find((c) => c.circuit === last)?.state === 'turn',
    `a turn on ${last}`,
  );

  await assert.rejects(
    admin.request('POST', '/api/admin/finalise', finaliseBody),
    refusedWith(409, 'ceremony.not_closed'),
  );

  await admin.request('POST', '/api/admin/phase', { phase: 'closed' });
  // closed → paused is no move of the phase table: refused as such, and the phase stays.
  await assert.rejects(
    admin.request('POST', '/api/admin/phase', { phase: 'paused' }),
    refusedWith(409, 'ceremony.invalid_phase_change'),
  );
  assert.equal(coordinator.phase.get(), 'closed');
  const bob = new ContributorClient(coordinator.url);
  await bob.signInDemo('bob');
  await assert.rejects(bob.join(), refusedWith(409, 'ceremony.not_open'));

  // alice's turn began before the close: finalising now would discard what she is computing.
  await assert.rejects(admin.request('POST', '/api/admin/finalise', finaliseBody), refusedWith(409, 'ceremony.locked'));
  await alice.upload(last, (await alice.makeContribution(last)).file);
  await alice.waitFor(
    (me) => me.status.circuits.find((c) => c.circuit === last)?.state === 'accepted',
    'alice accepted after the close',
  );
  assert.deepEqual(coordinator.lobby.activeTurns(), [], 'no new turn is granted while closed');

  // A stop in the middle of a finalisation: the phase was persisted as finalising, and nothing
  // finishes it. The next start puts the ceremony back to closed and tells the console when.
  coordinator.phase.beginFinalising(Date.now());
  assert.equal((await admin.request<{ phase: string }>('GET', '/api/ceremony')).phase, 'finalising');
  await coordinator.stop();
  const stoppedAt = Date.now();
  await coordinator.restart();
  admin = reconnect(admin, coordinator);
  assert.equal((await admin.request<{ phase: string }>('GET', '/api/ceremony')).phase, 'closed');
  const interrupted = await admin.request<{ phase: string; finalisationInterruptedAt?: number }>(
    'GET',
    '/api/admin/overview',
  );
  assert.equal(interrupted.phase, 'closed');
  assert.ok(
    (interrupted.finalisationInterruptedAt ?? 0) >= stoppedAt,
    `finalisationInterruptedAt ${interrupted.finalisationInterruptedAt}`,
  );

  const finalising = admin.request<{ manifest: Record<string, unknown> }>('POST', '/api/admin/finalise', finaliseBody);
  // Finalisation takes seconds (a beacon and a full verification per circuit); these land inside
  // it, once it has visibly begun: it creates the final folder under the ceremony lock.
  await finalisationStarted(finalising);
  assert.equal((await admin.request<{ phase: string }>('GET', '/api/ceremony')).phase, 'finalising');
  assert.equal((await admin.request<{ phase: string }>('GET', '/api/admin/overview')).phase, 'finalising');
  await assert.rejects(
    admin.request('POST', '/api/admin/phase', { phase: 'open' }),
    refusedWith(409, 'ceremony.locked'),
  );
  await assert.rejects(
    admin.request('POST', '/api/admin/phase', { phase: 'closed' }),
    refusedWith(409, 'ceremony.locked'),
  );
  await assert.rejects(admin.request('POST', '/api/admin/finalise', finaliseBody), refusedWith(409, 'ceremony.locked'));
  const done = await finalising;
  assert.equal(Object.keys(done.manifest).length, circuits.length);
  assert.equal(coordinator.phase.get(), 'finalised');
  await assert.rejects(
    admin.request('POST', '/api/admin/phase', { phase: 'open' }),
    refusedWith(409, 'ceremony.invalid_phase_change'),
  );
  await assert.rejects(
    admin.request('POST', '/api/admin/finalise', finaliseBody),
    refusedWith(409, 'ceremony.finalised'),
  );
  assert.equal(coordinator.phase.get(), 'finalised');
  const finished = await admin.request<{ phase: string; finalisationInterruptedAt?: number }>(
    'GET',
    '/api/admin/overview',
  );
  assert.equal(finished.phase, 'finalised');
  assert.equal(finished.finalisationInterruptedAt, undefined, 'the interruption is forgotten once finalised');
});

test('a port already taken: start-up fails with config.invalid and leaves no verifier process behind', async () => {
  const squatter = createServer();
  await new Promise<void>((resolve) => squatter.listen(0, '127.0.0.1', resolve));
  const { port } = squatter.address() as { port: number };
  const before = new Set(childVerifiers());
  // A folder of its own: the running coordinator's would refuse this one first (ceremony.already_served).
  const folder = await copyCeremony(dataDir);
  try {
    await assert.rejects(
      startCoordinator(
        loadServerConfig({ CEREMONY_DATA: folder, PORT: String(port), HOST: '127.0.0.1', COORDINATOR_TOKEN: TOKEN }),
        { log: { info: () => {}, warn: () => {} } },
      ),
      (error: unknown) =>
        (error as { code?: string }).code === 'config.invalid' &&
        /cannot listen on 127\.0\.0\.1:\d+/.test((error as Error).message),
    );
  } finally {
    squatter.close();
    await rm(folder, { recursive: true, force: true });
  }
  const deadline = Date.now() + 10_000;
  let left = childVerifiers().filter((pid) => !before.has(pid));
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    left = childVerifiers().filter((pid) => !before.has(pid));
  }
  assert.deepEqual(left, [], 'a verifier process outlived the failed start');
});

/** The same signed-in client (its session lives in SQLite) against the coordinator now running. */
function reconnect(client: ContributorClient, running: RunningCoordinator): ContributorClient {
  const again = new ContributorClient(running.url);
  again.cookie = client.cookie;
  again.csrfToken = client.csrfToken;
  return again;
}

/**
 * Resolves once the final folder exists (finalisation has taken the lock and begun); rejects if the
 * request settles first, so a finalisation that never starts fails here rather than later.
 */
async function finalisationStarted(request: Promise<unknown>): Promise<void> {
  let settled: unknown;
  void request.then(
    () => (settled = 'finished'),
    (error: unknown) => (settled = error),
  );
  const finalDir = ceremonyPaths(dataDir).finalDir;
  const deadline = Date.now() + 60_000;
  while (!existsSync(finalDir)) {
    if (settled !== undefined)
      throw new Error(`the finalise request ended before the final folder appeared: ${String(settled)}`);
    if (Date.now() > deadline) throw new Error('finalisation did not begin within 60 s');
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Pids of this process's children that run the embedded verifier (Linux /proc). */
function childVerifiers(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === process.pid && readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('embedded-verifier'))
        pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}
