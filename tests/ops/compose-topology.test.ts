/**
 * The topology of docker-compose.yml, without a Docker engine: its services run as processes from
 * the file itself (each service's `command:` after the Dockerfile's ENTRYPOINT, its `environment:`
 * after the Dockerfile's ENV), so editing the compose file or the Dockerfile changes this test.
 * Redis, `ceremony serve` with REDIS_URL and two `ceremony worker`s share a temporary initialised
 * test ceremony as the data volume. A contributor contributes over HTTP; the worker that takes the
 * verification is killed (kill -9 of its process group) mid-job, and the other one finishes it:
 * the contribution is accepted once, and the head and transcript are right.
 *
 * Mapped to this machine (and only these): WORKDIR → this checkout, `node` → this Node; each
 * named volume's mount path → a temporary folder; `service:port` in a URL → 127.0.0.1 and the
 * service's free port; a published port → a free loopback port, HOST 0.0.0.0 → 127.0.0.1 (this
 * is a shared machine); `${VAR:-default}` takes the default unless set below. Redis gets a
 * port, bind address and folder on the command line (its image's defaults). Test-only settings:
 * short worker locks (WORKER_LOCK_DURATION_MS, WORKER_STALLED_INTERVAL_MS) so the job of the killed
 * worker is taken over in seconds rather than the default 30 s.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { Queue } from 'bullmq';
import { parse as parseYaml } from 'yaml';
import { newCeremonyDir, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { DEFAULT_VERIFICATION_QUEUE } from '../../core/verifier-contract/verifier-contract.ts';
import { verificationJobId } from '../../server/verification-dispatch/bullmq-dispatcher.ts';
import { groupAlive, startGroup, stopAllGroups, type GroupProcess } from '../helpers/process-group.ts';

interface ComposeService {
  image?: string;
  build?: unknown;
  command?: string[];
  environment?: Record<string, string | number>;
  ports?: string[];
  volumes?: string[];
}

const CIRCUITS = ['register', 'treeUpdate'];
const TEST_ONLY_WORKER_ENV = { WORKER_LOCK_DURATION_MS: '2000', WORKER_STALLED_INTERVAL_MS: '500' };

let work: string;
let dataDir: string;
let services: Record<string, ComposeService>;
let dockerfile: { workdir: string; entrypoint: string[]; env: Record<string, string> };
const hostPorts = new Map<string, number>();
const volumeDirs = new Map<string, string>();
let queue: Queue | undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** WORKDIR, ENTRYPOINT (exec form) and ENV of the Dockerfile: what every service runs under. */
function parseDockerfile(text: string): typeof dockerfile {
  const lines = text.split('\n').map((l) => l.trim());
  const workdir = lines
    .filter((l) => l.startsWith('WORKDIR '))
    .map((l) => l.slice(8).trim())
    .at(-1);
  const entrypoint = lines
    .filter((l) => l.startsWith('ENTRYPOINT '))
    .map((l) => JSON.parse(l.slice(11)) as string[])
    .at(-1);
  assert.ok(workdir && entrypoint, 'the Dockerfile needs WORKDIR and an exec-form ENTRYPOINT');
  const env: Record<string, string> = {};
  for (const line of lines.filter((l) => l.startsWith('ENV '))) {
    for (const [, key, value] of line.slice(4).matchAll(/([A-Za-z_][A-Za-z0-9_]*)=(\S+)/g)) env[key!] = value!;
  }
  return { workdir, entrypoint, env };
}

/** `${VAR:-default}` / `${VAR}` as compose interpolates them, from `vars` only (not this process's env). */
function interpolate(value: string, vars: Record<string, string>): string {
  return value.replace(
    /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g,
    (_m, name: string, fallback?: string) => vars[name] || (fallback ?? ''),
  );
}

/** A container path or URL of `service`, as it is on this machine. */
function mapValue(service: ComposeService, value: string): string {
  let mapped = value;
  for (const volume of service.volumes ?? []) {
    const [name, mount] = volume.split(':') as [string, string];
    const dir = volumeDirs.get(name);
    assert.ok(dir, `no folder for volume ${name}`);
    if (mapped === mount || mapped.startsWith(`${mount}/`)) mapped = dir + mapped.slice(mount.length);
  }
  for (const [name, port] of hostPorts) {
    const containerPort = name === 'redis' ? '6379' : (services[name]!.ports?.[0]?.split(':')[1] ?? '');
    mapped = mapped.replace(new RegExp(`//${name}:${containerPort}\\b`), `//127.0.0.1:${port}`);
  }
  return mapped;
}

/** The command line and environment `service` runs with, mapped to this machine. */
function processOf(
  name: string,
  vars: Record<string, string> = {},
  extraEnv: Record<string, string> = {},
): { command: string; args: string[]; env: NodeJS.ProcessEnv } {
  const service = services[name]!;
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? tmpdir() };
  if (service.build !== undefined) Object.assign(env, dockerfile.env);
  for (const [key, raw] of Object.entries(service.environment ?? {}))
    env[key] = mapValue(service, interpolate(String(raw), vars));
  const published = service.ports?.[0]?.split(':')[1];
  if (published !== undefined && env.PORT === published) env.PORT = String(hostPorts.get(name));
  if (env.HOST === '0.0.0.0') env.HOST = '127.0.0.1';
  Object.assign(env, extraEnv);
  const commandArgs = (service.command ?? []).map((arg) => mapValue(service, arg));
  if (service.build !== undefined) {
    // The image's `node` and its WORKDIR-relative script are this Node and this checkout.
    const [node, ...entryArgs] = dockerfile.entrypoint as [string, ...string[]];
    assert.equal(node, 'node');
    const script = entryArgs.map((a) =>
      path.join(REPO_ROOT, path.relative(dockerfile.workdir, path.resolve(dockerfile.workdir, a))),
    );
    return { command: process.execPath, args: [...script, ...commandArgs], env };
  }
  const [command, ...args] = commandArgs as [string, ...string[]];
  return { command, args, env };
}

function start(
  name: string,
  label: string,
  options: { vars?: Record<string, string>; env?: Record<string, string>; extraArgs?: string[] } = {},
): GroupProcess {
  const { command, args, env } = processOf(name, options.vars, options.env);
  return startGroup(command, [...args, ...(options.extraArgs ?? [])], { cwd: REPO_ROOT, env, label });
}

before(async () => {
  services = (
    parseYaml(await readFile(path.join(REPO_ROOT, 'docker-compose.yml'), 'utf8')) as {
      services: Record<string, ComposeService>;
    }
  ).services;
  dockerfile = parseDockerfile(await readFile(path.join(REPO_ROOT, 'Dockerfile'), 'utf8'));
  assert.deepEqual(Object.keys(services).sort(), ['redis', 'server', 'worker']);
  work = await mkdtemp(path.join(tmpdir(), 'compose-topology-'));
  dataDir = await newCeremonyDir({
    parentDir: work,
    circuits: CIRCUITS,
  });
  await initCeremony(dataDir);
  await releaseBn128();
  volumeDirs.set('ceremony-data', dataDir);
  volumeDirs.set('redis-data', await mkdtemp(path.join(work, 'redis-data-')));
  hostPorts.set('redis', await freePort());
  hostPorts.set('server', await freePort());
});

after(async () => {
  await queue?.close();
  await stopAllGroups();
  // The contributor's snarkjs built the curve (worker threads) in this process.
  await releaseBn128();
  if (work) await rm(work, { recursive: true, force: true });
});

test(
  'compose topology: redis, server and two workers as processes; a worker killed mid-job, the other finishes it',
  { timeout: 600_000 },
  async () => {
    const redis = start('redis', 'redis', {
      extraArgs: [
        '--port',
        String(hostPorts.get('redis')),
        '--bind',
        '127.0.0.1',
        '--dir',
        volumeDirs.get('redis-data')!,
      ],
    });
    await redis.waitFor(/Ready to accept connections/, 20_000);

    const serverUrl = `http://127.0.0.1:${hostPorts.get('server')}`;
    const server = start('server', 'ceremony serve', {
      vars: { PUBLIC_URL: serverUrl },
      env: { OPEN_ON_START: 'true' },
    });
    await server.waitFor(/coordinator listening on http/);
    assert.match(server.output(), /"verification":"bullmq"/);

    const workers = [0, 1].map((i) => start('worker', `ceremony worker #${i}`, { env: TEST_ONLY_WORKER_ENV }));
    await Promise.all(workers.map((w) => w.waitFor(/ready on queue ceremony-verification/)));
    queue = new Queue(DEFAULT_VERIFICATION_QUEUE, {
      connection: { url: `redis://127.0.0.1:${hostPorts.get('redis')}` },
    });

    const alice = new ContributorClient(serverUrl);
    await alice.signInDemo('alice');
    await alice.join();
    await alice.waitFor(
      (me) => me.status.circuits.find((c) => c.circuit === 'register')?.state === 'turn',
      'a turn on register',
    );
    const register = await alice.makeContribution('register');
    await alice.upload('register', register.file);

    // Whichever worker takes the job is the one killed, as soon as it says it started.
    const taker = await Promise.race(
      workers.map((w, i) =>
        w.waitFor(/contribution (\S+): verifying/).then((match) => ({ i, contributionId: match[1]! })),
      ),
    );
    const doomed = workers[taker.i]!;
    const survivor = workers[1 - taker.i]!;
    process.kill(-doomed.child.pid!, 'SIGKILL');
    assert.equal((await doomed.exited).signal, 'SIGKILL');
    assert.equal(groupAlive(doomed.child.pid!), false);
    const job = await queue.getJob(verificationJobId(taker.contributionId));
    assert.equal(await job!.getState(), 'active', 'the verification finished before the kill: the test proves nothing');
    assert.equal(job!.processedBy, `${hostname()}:${doomed.child.pid}`);

    const afterKill = await alice.waitFor(
      (me) => me.status.circuits.find((c) => c.circuit === 'register')?.state === 'accepted',
      'register accepted',
      120_000,
    );
    await survivor.waitFor(new RegExp(`contribution ${taker.contributionId}: valid`));
    const accepted = afterKill.contributions.filter((c) => c.circuit === 'register' && c.status === 'accepted');
    assert.deepEqual(
      accepted.map((c) => [c.id, c.contributionHash]),
      [[taker.contributionId, register.contributionHash]],
    );

    // The survivor alone takes the next one.
    await alice.waitFor(
      (me) => me.status.circuits.find((c) => c.circuit === 'treeUpdate')?.state === 'turn',
      'a turn on treeUpdate',
    );
    const treeUpdate = await alice.makeContribution('treeUpdate');
    await alice.upload('treeUpdate', treeUpdate.file);
    const done = await alice.waitFor((me) => me.status.done, 'both circuits accepted', 120_000);
    assert.equal(
      done.contributions.find((c) => c.circuit === 'treeUpdate' && c.status === 'accepted')?.contributionHash,
      treeUpdate.contributionHash,
    );

    // Head and transcript: one link per circuit, by alice, with the hashes she computed, chained.
    assert.equal(await alice.headIndex('register'), 1);
    assert.equal(await alice.headIndex('treeUpdate'), 1);
    const transcript = await alice.request<{
      entries: Array<{
        type: string;
        circuit?: string;
        index?: number;
        contributor?: string;
        contributionHash?: string;
        hash: string;
        prevHash: string;
      }>;
    }>('GET', '/api/transcript');
    const contributions = transcript.entries.filter((e) => e.type === 'contribution');
    assert.deepEqual(contributions.map((e) => [e.circuit, e.index, e.contributor, e.contributionHash]).sort(), [
      ['register', 1, 'alice', register.contributionHash],
      ['treeUpdate', 1, 'alice', treeUpdate.contributionHash],
    ]);
    for (let i = 1; i < transcript.entries.length; i++)
      assert.equal(transcript.entries[i]!.prevHash, transcript.entries[i - 1]!.hash);

    for (const stopping of [survivor, server, redis]) {
      const { lingered } = await stopping.stop('SIGTERM');
      assert.equal(lingered, false, 'a process of the group was still running when the grace period ended');
      assert.equal(groupAlive(stopping.child.pid!), false);
    }
    assert.match(survivor.output(), /verification worker stopped/);
  },
);
