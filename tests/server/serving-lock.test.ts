/**
 * One coordinator per data folder: a second `ceremony serve` on a folder another coordinator
 * serves is refused at start-up (`ceremony.already_served`), naming the first, before it writes
 * anything there; once the first stops, or is killed with kill -9, the folder can be served again
 * at once. (Two coordinators on one folder would each grant the same circuit's turn and append to
 * one queue log from two views of the queues.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { startGroup, stopAllGroups } from '../helpers/process-group.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { newCeremonyDir, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { isCoordinatorError } from '../../core/errors.ts';

const CLI = path.join(REPO_ROOT, 'bin', 'ceremony.js');
let dataDir: string;
let coordinator: TestCoordinator | undefined;

before(async () => {
  dataDir = await newCeremonyDir({ circuits: ['register'] });
  await initCeremony(dataDir);
});

after(async () => {
  await stopAllGroups();
  await coordinator?.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Verification in an embedded verifier: the test needs no Redis. */
function withoutRedis(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const { REDIS_URL: _redis, ...rest } = env;
  return rest;
}

/** Another coordinator on the folder in this process: refused (or, were it not, stopped again, so the test ends). */
async function startAnother(): Promise<void> {
  const another = await startTestCoordinator({ dataDir });
  await another.close();
}

function serveFromCli() {
  return startGroup(process.execPath, [CLI, 'serve', '--data', dataDir, '--port', '0'], {
    cwd: REPO_ROOT,
    env: withoutRedis(process.env),
    label: 'ceremony serve',
  });
}

test('a second coordinator on a served folder is refused, naming the first; stopped, the folder is free', async () => {
  coordinator = await startTestCoordinator({ dataDir });
  const refusedHere = (error: unknown) =>
    isCoordinatorError(error, 'ceremony.already_served') &&
    error.message.includes(`another coordinator (pid ${process.pid} on host ${hostname()}, since 20`);
  await assert.rejects(startAnother(), refusedHere, 'in the same process');

  const second = serveFromCli();
  const { code } = await second.exited;
  assert.equal(code, 1, `\`ceremony serve\` exits 1:\n${second.output()}`);
  assert.match(second.output(), /ceremony\.already_served/);
  assert.match(second.output(), new RegExp(`another coordinator \\(pid ${process.pid} on host `));
  assert.doesNotMatch(second.output(), /coordinator listening/);

  await coordinator.stop();
  await coordinator.restart();
  assert.equal((await fetch(`${coordinator.url}/healthz`)).status, 200, 'served again once the first stopped');
  await coordinator.close();
  coordinator = undefined;
});

test('a coordinator killed with kill -9 leaves nothing that keeps the folder from being served', async () => {
  const killed = serveFromCli();
  await killed.waitFor(/coordinator listening/);
  await assert.rejects(startAnother(), (error: unknown) => isCoordinatorError(error, 'ceremony.already_served'));
  await killed.stop('SIGKILL', 0);
  coordinator = await startTestCoordinator({ dataDir });
  assert.equal((await fetch(`${coordinator.url}/healthz`)).status, 200);
});
