/**
 * A verification result for a contribution that is no longer next (the head moved while the job
 * waited in Redis) is discarded: the head it did not extend stays, nothing is committed twice,
 * the upload is deleted, and the contributor is told and put back in the queue.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, rm } from 'node:fs/promises';
import path from 'node:path';
import { newCeremonyDir, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';

let redis: RedisServer;
let worker: ChildProcess | undefined;
let coordinator: RunningCoordinator;
let dataDir: string;

before(async () => {
  redis = await startRedisServer();
  dataDir = await newCeremonyDir();
  await initCeremony(dataDir);
  coordinator = await startCoordinator(loadServerConfig({ CEREMONY_DATA: dataDir, PORT: '0', REDIS_URL: redis.url, OPEN_ON_START: 'true' }), {
    log: { info: () => {}, warn: () => {} },
    tickIntervalMs: 100,
  });
});

after(async () => {
  await coordinator?.close();
  worker?.kill('SIGKILL');
  await redis?.stop();
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
});

test('a verified contribution whose head moved meanwhile is discarded, not committed', async () => {
  const alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  await alice.join();
  const { file } = await alice.makeContribution('register');
  await alice.upload('register', file); // no worker yet: the job waits in Redis
  await alice.waitFor((m) => m.status.circuits[0]!.state === 'verifying', 'verifying');

  await contributeLocally(dataDir, 'register', 'offline-contributor'); // the head moves to 1
  worker = spawn(process.execPath, [path.join(REPO_ROOT, 'bin', 'ceremony.js'), 'worker', '--redis', redis.url], { stdio: 'ignore' });

  const me = await alice.waitFor((m) => m.contributions.some((c) => c.status === 'discarded'), 'the discarded verdict', 60_000);
  assert.equal(me.contributions[0]!.code, 'contribution.not_next');
  assert.ok(!JSON.stringify(me).includes(dataDir), 'the verdict names no server path');
  assert.notEqual(me.status.circuits[0]!.state, 'accepted');
  const state = await openCeremony(dataDir);
  assert.equal(state.chains.get('register')!.headIndex, 1);
  assert.deepEqual(state.chains.get('register')!.contributions.map((c) => c.contributor), ['offline-contributor']);
  // The discarded upload (tens to hundreds of MB in production) does not stay on disk.
  assert.deepEqual(await readdir(path.join(dataDir, 'uploads', 'register')), []);
  // alice is back in the queue and gets a new turn on the new head.
  await alice.waitFor((m) => m.status.circuits[0]!.state === 'turn', 'a new turn');
});
