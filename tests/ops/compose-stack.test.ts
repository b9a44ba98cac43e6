/**
 * The compose stack built and run for real, as an operator runs it (docs/operations.md, Docker):
 * docker-compose.yml and the Dockerfiles as they are, run by podman (compose-project.ts) on the
 * stand-in base images (scripts/stand-in-images.sh). The data volume is seeded and `init` run with
 * `compose run`; Redis, the coordinator, two workers and the TLS proxy start; the console opens the
 * ceremony through the proxy (HTTP/2); a terminal contributor (`ceremony contribute --coordinator
 * https://…`, trusting the test's own certificate authority) takes a turn on all nine circuits
 * through the proxy, while the worker that takes one verification is killed in the middle of it
 * (the other finishes it; nothing is lost). Through the proxy: HTTP/2, the presence stream event by
 * event, downloads with their caching headers and ranges, an upload's PATCH, and a forged
 * X-Forwarded-For that chooses nothing. While the coordinator finalises (holding the writers' lock),
 * `compose run … finalise` is refused by the lock; the stack is stopped mid-finalisation, then
 * `compose run … finalise` and `publish` pass, and the host audits what was published.
 *
 * Test settings, each for a reason: the contributor signs in with Semaphore (demo sign-in answers
 * loopback only, and the coordinator here is behind a proxy); the workers' lock lasts 3 s, not
 * 30 s, so the killed worker's job is taken over within seconds (a compose override); presence is
 * 8 s, so the stream's keep-alives come every 2 s. The project's name carries this process's id:
 * several runs on one machine do not meet, and a killed run's leftovers are removed by the next.
 * Skipped, saying why, only where podman cannot run at all (not root, not installed); under CI it
 * fails instead.
 */
import { after, before, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { copyFile, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Identity } from '@semaphore-protocol/identity';
import { Queue } from 'bullmq';
import { devPtau, devPtauHash, PROJECT_CIRCUITS, REPO_ROOT, TEST_BEACON } from '../fixtures/ceremony-fixture.ts';
import type { GroupProcess } from '../helpers/process-group.ts';
import { runCli } from '../helpers/run-cli.ts';
import { waitUntil } from '../helpers/wait-until.ts';
import { freePort } from '../helpers/anvil.ts';
import { DEFAULT_VERIFICATION_QUEUE } from '../../core/verifier-contract/verifier-contract.ts';
import { verificationJobId } from '../../server/verification-dispatch/bullmq-dispatcher.ts';
import { ComposeProject, PODMAN_FLAGS, podman } from './compose-project.ts';
import { H2Client } from './h2-client.ts';
import { makeTestCertificate, type TestCertificate } from './test-certificate.ts';

const PROJECT_PREFIX = 'ceremony-test';
const PROJECT = `${PROJECT_PREFIX}-${process.pid}`;
const COORDINATOR_TOKEN = randomBytes(24).toString('hex');
const member = new Identity(`compose stack test ${randomBytes(8).toString('hex')}`);
/**
 * Beacon iterations of the console's finalisation: 2^26 hashes before its first beacon entry, over
 * a minute on a fast idle machine (2^20 take 1.5 to 6 s), so it holds the writers' lock while the
 * test runs another finalise and stops the stack, SIGKILL after 10 s included (which then ends it
 * with nothing committed).
 */
const SLOW_BEACON_ITERATIONS = 26;

interface Stack {
  project: ComposeProject;
  work: string;
  certificate: TestCertificate;
  origin: string;
  server: GroupProcess;
  workers: Array<{ name: string; log: GroupProcess }>;
  /** Every followed container's log, by container name (what a failure prints). */
  logs: Map<string, GroupProcess>;
}

let stack: Stack | undefined;
let skipReason: string | undefined;

function onPath(tool: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${tool}`]).status === 0;
}

/** Why podman cannot run this test here, or nothing. */
async function podmanUnavailable(): Promise<string | undefined> {
  if (process.getuid?.() !== 0)
    return 'needs root: rootful podman (the host reads the volumes and reaches the containers)';
  for (const tool of ['podman', 'runc', 'debootstrap', 'openssl'])
    if (!onPath(tool)) return `${tool} is not installed (.ci/run installs podman, runc, debootstrap)`;
  const info = await podman(['info', '--format', '{{.Host.CgroupsVersion}}'], { allowFailure: true });
  return info.code === 0 ? undefined : `podman cannot run here: ${info.stderr.trim().slice(0, 300)}`;
}

/** Removes what runs of this test left behind whose process is gone (a killed run cannot clean up). */
async function sweepAbandonedProjects(): Promise<void> {
  // Names are `<project>-<service>-<n>` (containers) and `<project>_<name>` (networks, volumes).
  const abandoned = (name: string): boolean => {
    const pid = new RegExp(`^${PROJECT_PREFIX}-(\\d+)[-_]`).exec(name)?.[1];
    if (pid === undefined) return false;
    try {
      process.kill(Number(pid), 0);
      return false;
    } catch {
      return true;
    }
  };
  for (const [kind, field] of [
    ['container', '{{.Names}}'],
    ['network', '{{.Name}}'],
    ['volume', '{{.Name}}'],
  ] as const) {
    const listed = await podman(
      [
        kind,
        'ls',
        ...(kind === 'container' ? ['-a'] : []),
        '--filter',
        'label=io.podman.compose.project',
        '--format',
        field,
      ],
      { allowFailure: true },
    );
    const names = listed.stdout.split('\n').filter((name) => name !== '' && abandoned(name));
    if (names.length > 0) await podman([kind, 'rm', '-f', ...names], { allowFailure: true });
  }
}

/** A /24 under 10.213.0.0/16 that no podman network of this machine uses. */
async function freeEdgeSubnet(): Promise<string> {
  const used = (await podman(['network', 'ls', '--format', '{{range .Subnets}}{{.Subnet}} {{end}}'])).stdout;
  for (let attempt = 0; attempt < 50; attempt++) {
    const subnet = `10.213.${16 + Math.floor(Math.random() * 224)}.0/24`;
    if (!used.includes(subnet)) return subnet;
  }
  throw new Error('no free 10.213.x.0/24 for the edge network');
}

/** What a failure prints beside its error: the project's containers and the end of each one's log. */
async function diagnostics(): Promise<string> {
  if (!stack) return '(no stack)';
  const filter = `label=io.podman.compose.project=${PROJECT}`;
  const format = '{{.Names}}  {{.Status}}';
  const listed = await podman(['ps', '-a', '--filter', filter, '--format', format], { allowFailure: true });
  const lines = ['--- containers ---', listed.stdout.trim() || listed.stderr.trim().slice(0, 500)];
  for (const [name, log] of stack.logs ?? [])
    lines.push(`--- ${name}, its last 40 lines ---`, log.output().trimEnd().split('\n').slice(-40).join('\n'));
  return lines.join('\n');
}

/**
 * `body` run as a test of the stack: skipped where podman cannot run; on failure or after
 * `timeoutMs` (a hang), the stack's diagnostics are printed before the error is rethrown.
 */
function stackTest(name: string, timeoutMs: number, body: (t: TestContext) => Promise<void>): void {
  test(name, { timeout: timeoutMs + 60_000 }, async (t) => {
    if (skipReason) return t.skip(skipReason);
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new Error(`no end within ${timeoutMs / 1000} s`)), timeoutMs);
    });
    try {
      await Promise.race([body(t), hang]);
    } catch (error) {
      process.stderr.write(`compose: failed: ${name}\n${await diagnostics()}\n`);
      throw error;
    } finally {
      clearTimeout(timer);
    }
  });
}

/** The stand-in base images (cached; their script's lines echoed as progress). */
function standInImages(): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(path.join(REPO_ROOT, 'scripts', 'stand-in-images.sh'), [], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    const echo = (data: Buffer): void => {
      output += data.toString();
      process.stderr.write(data);
    };
    child.stdout.on('data', echo);
    child.stderr.on('data', echo);
    child.once('error', reject);
    child.once('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`stand-in-images.sh exited ${code}:\n${output.slice(-3000)}`)),
    );
  });
}

/** What an operator puts in the data volume before `init`: ceremony.json, the circuits, the ptau. */
async function seedFolder(work: string): Promise<string> {
  const seed = path.join(work, 'seed');
  await cp(path.join(REPO_ROOT, 'ceremony-data', 'ceremony.json'), path.join(seed, 'ceremony.json'));
  await cp(path.join(REPO_ROOT, 'ceremony-data', 'circuits'), path.join(seed, 'circuits'), { recursive: true });
  const config = JSON.parse(await readFile(path.join(seed, 'ceremony.json'), 'utf8')) as { ptau: string };
  await mkdir(path.dirname(path.join(seed, config.ptau)), { recursive: true });
  await copyFile(await devPtau(), path.join(seed, config.ptau));
  // The container's user reads it through a read-only mount; the rest of `work` (the settings, the
  // test CA's key) stays the test's own: others may only pass through it.
  spawnSync('chmod', ['-R', 'a+rX', seed]);
  spawnSync('chmod', ['a+x', work]);
  return seed;
}

async function writeSettings(work: string): Promise<{ envFile: string; override: string }> {
  const envFile = path.join(work, 'ceremony.env');
  await writeFile(
    envFile,
    [
      '# The coordinator settings of the container test (docker-compose.yml reads them as ceremony.env).',
      `COORDINATOR_TOKEN=${COORDINATOR_TOKEN}`,
      `SEMAPHORE_GROUP_MEMBERS=${member.commitment}`,
      'PRESENCE_MS=8000',
      'RATE_LIMIT_QUEUE_LOG=5',
      '',
    ].join('\n'),
  );
  const override = path.join(work, 'compose.test.yml');
  await writeFile(
    override,
    [
      "# The killed worker's job is taken over after 3 s, not 30 s.",
      'services:',
      '  worker:',
      '    environment:',
      "      WORKER_LOCK_DURATION_MS: '3000'",
      "      WORKER_STALLED_INTERVAL_MS: '1000'",
      '',
    ].join('\n'),
  );
  return { envFile, override };
}

before(
  async () => {
    skipReason = await podmanUnavailable();
    if (skipReason) {
      if (process.env.CI) throw new Error(`the container test cannot run under CI: ${skipReason}`);
      return;
    }
    await sweepAbandonedProjects();
    const work = await mkdtemp(path.join(tmpdir(), 'compose-stack-'));
    const certificate = await makeTestCertificate(await mkdtemp(path.join(work, 'tls-')), ['localhost', '127.0.0.1']);
    const { envFile, override } = await writeSettings(work);
    const httpsPort = await freePort();
    const origin = `https://localhost:${httpsPort}`;
    const subnet = await freeEdgeSubnet();
    const project = await ComposeProject.load(
      PROJECT,
      [path.join(REPO_ROOT, 'docker-compose.yml'), override],
      {
        CEREMONY_DOMAIN: 'localhost',
        PUBLIC_URL: origin,
        CEREMONY_CERTIFICATE: 'files',
        CEREMONY_CERTIFICATES: certificate.folder,
        CEREMONY_ENV_FILE: envFile,
        EDGE_SUBNET: subnet,
        PROXY_ADDRESS: subnet.replace(/0\/24$/, '2'),
      },
      { hostPorts: { 'proxy:443': httpsPort }, imagePrefix: 'ceremony-compose-test' },
    );
    stack = { project, work, certificate, origin, logs: new Map() } as Stack;
    try {
      await buildAndStart(stack);
    } catch (error) {
      process.stderr.write(`compose: the stack did not start\n${await diagnostics()}\n`);
      throw error;
    }
  },
  { timeout: 50 * 60_000 },
);

/** The images (stand-in bases, then the compose file's), then the stack, as an operator starts it. */
async function buildAndStart(started: Stack): Promise<void> {
  const { project, work } = started;
  await standInImages();
  const timings = await project.build((line) => process.stderr.write(`compose: ${line}\n`));
  for (const { services, seconds } of timings) {
    const size = (await podman(['image', 'inspect', '--format', '{{.Size}}', project.imageTag(services[0]!)])).stdout;
    const megabytes = (Number(size) / 1e6).toFixed(0);
    process.stderr.write(`compose: built ${services.join(', ')} in ${seconds.toFixed(1)} s (${megabytes} MB)\n`);
  }
  await startStack(started, await seedFolder(work));
}

/** The operator's steps: seed the volume, `init` it, then `up` (proxy → server → redis) and two workers. */
async function startStack(started: Stack, seed: string): Promise<void> {
  const { project } = started;
  const seeded = await project.run('server', ['-R', '/seed/.', '/data/'], {
    entrypoint: ['cp'],
    volumes: [`${seed}:/seed:ro`],
  });
  assert.equal(seeded.code, 0, seeded.stderr);
  const init = await project.run('server', ['init', '--data', '/data']);
  assert.equal(init.code, 0, init.stderr);
  await project.up('proxy');
  const follow = (name: string): GroupProcess => {
    const log = project.follow(name);
    started.logs.set(name, log);
    return log;
  };
  follow(`${PROJECT}-redis-1`);
  started.server = follow(`${PROJECT}-server-1`);
  const proxyLog = follow(`${PROJECT}-proxy-1`);
  const workerNames = await project.up('worker', 2);
  started.workers = workerNames.map((name) => ({ name, log: follow(name) }));
  // The JSON line on stderr: it says the coordinator queues on Redis (stdout says only that it listens).
  await started.server.waitFor(/"message":"coordinator listening".*"verification":"bullmq"/, 120_000);
  await Promise.all(started.workers.map((w) => w.log.waitFor(/ready on queue ceremony-verification/, 120_000)));
  await proxyLog.waitFor(/serving initial configuration/, 60_000);
}

after(
  async () => {
    if (!stack) return;
    await stack.project.down();
    await rm(stack.work, { recursive: true, force: true });
  },
  { timeout: 5 * 60_000 },
);

/** The console, through the proxy over HTTP/2, signed in with COORDINATOR_TOKEN. */
async function consoleSession(): Promise<H2Client> {
  const client = await H2Client.connect(stack!.origin, stack!.certificate.ca);
  await client.signInCoordinator(COORDINATOR_TOKEN);
  return client;
}

/** GET /api/queue-log from a container of the edge network (its own address), through the proxy: the status. */
async function queueLogFromAnotherAddress(): Promise<string> {
  const proxy = await stack!.project.address(`${PROJECT}-proxy-1`, 'edge');
  const script = [
    "const https = require('node:https');",
    'const request = https.request({ host: process.env.PROXY, port: 443, path: "/api/queue-log",',
    '  servername: "localhost", headers: { host: "localhost" }, ca: process.env.CA },',
    '  (response) => { console.log(response.statusCode); response.resume(); });',
    'request.on("error", (error) => { console.error(error.message); process.exit(2); });',
    'request.end();',
  ].join('\n');
  const answered = await podman([
    'run',
    '--rm',
    ...PODMAN_FLAGS,
    '--network',
    `${PROJECT}_edge`,
    '-e',
    `PROXY=${proxy}`,
    '-e',
    `CA=${stack!.certificate.ca}`,
    'docker.io/library/node:24-bookworm-slim',
    'node',
    '-e',
    script,
  ]);
  return answered.stdout.trim();
}

stackTest(
  'only the proxy is published, with TLS and HTTP/2; the coordinator counts each client by the address the proxy saw',
  5 * 60_000,
  async (t) => {
    const { project, origin, certificate, workers } = stack!;
    const published = [...project.spec.services.values()].filter((service) => service.ports.length > 0);
    assert.deepEqual(
      published.map((service) => service.name),
      ['proxy'],
    );
    for (const name of [`${PROJECT}-server-1`, `${PROJECT}-redis-1`, ...workers.map((w) => w.name)])
      assert.equal((await podman(['port', name])).stdout.trim(), '', `${name} publishes nothing`);
    const client = await H2Client.connect(origin, certificate.ca);
    t.after(() => client.close());
    assert.equal(client.protocol, 'h2');
    // RATE_LIMIT_QUEUE_LOG=5: each request forges another X-Forwarded-For, and the sixth is still refused.
    for (let i = 0; i < 5; i++) {
      const answer = await client.request('GET', '/api/queue-log', {
        headers: { 'x-forwarded-for': `203.0.113.${i}` },
      });
      assert.equal(answer.status, 200, answer.body.toString());
    }
    const sixth = await client.request('GET', '/api/queue-log', { headers: { 'x-forwarded-for': '198.51.100.7' } });
    assert.equal(sixth.status, 429);
    assert.equal((JSON.parse(sixth.body.toString()) as { error: { code: string } }).error.code, 'rate.limited');
    // Not the proxy's address either: a client from another address still has its five.
    assert.equal(await queueLogFromAnotherAddress(), '200');
  },
);

/** The chunks of a stream, each with the time it came, until `enough` holds or `timeoutMs` passes. */
async function chunksOf(
  stream: NodeJS.ReadableStream & { close(): void },
  enough: (text: string) => boolean,
  timeoutMs: number,
): Promise<Array<{ at: number; text: string }>> {
  const chunks: Array<{ at: number; text: string }> = [];
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`stream: ${JSON.stringify(chunks)}`)), timeoutMs);
    stream.on('data', (data: Buffer) => {
      chunks.push({ at: Date.now(), text: data.toString() });
      if (enough(chunks.map((c) => c.text).join(''))) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  stream.close();
  return chunks;
}

stackTest(
  'through the proxy: the presence stream event by event, downloads with their caching headers and ranges, ' +
    'and a large PATCH handed to the coordinator',
  5 * 60_000,
  async (t) => {
    const client = await consoleSession();
    t.after(() => client.close());

    // The hello alone, then each keep-alive (every 2 s with PRESENCE_MS=8000) as it is written: a
    // buffering proxy would hold them back and hand them over together.
    const presence = await client.open('GET', '/api/me/presence');
    assert.equal(presence.status, 200);
    assert.match(String(presence.headers['content-type']), /^text\/event-stream/);
    const chunks = await chunksOf(presence.stream, (text) => text.split(': keep-alive').length > 2, 20_000);
    assert.match(chunks[0]!.text, /event: hello/);
    assert.ok(!chunks[0]!.text.includes(': keep-alive'), 'the hello came before any keep-alive');
    const beats = chunks.filter((c) => c.text.includes(': keep-alive'));
    assert.ok(beats.length >= 2, JSON.stringify(chunks));
    assert.ok(beats[1]!.at - beats[0]!.at >= 1000, 'two keep-alives came a beat apart, one by one');

    // An immutable download: its headers as the coordinator sent them, a range, a revalidation.
    const key = await client.request('GET', '/api/circuits/register/zkeys/0');
    assert.equal(key.status, 200);
    assert.equal(key.headers['cache-control'], 'public, max-age=31536000, immutable');
    assert.equal(Number(key.headers['content-length']), key.body.length);
    const etag = String(key.headers.etag);
    assert.match(etag, /^"[0-9a-f]{128}"$/);
    assert.equal(key.headers['content-encoding'], undefined);
    const range = await client.request('GET', '/api/circuits/register/zkeys/0', {
      headers: { range: 'bytes=100-199' },
    });
    assert.equal(range.status, 206);
    assert.equal(range.headers['content-range'], `bytes 100-199/${key.body.length}`);
    assert.deepEqual(range.body, key.body.subarray(100, 200));
    const again = await client.request('GET', '/api/circuits/register/zkeys/0', { headers: { 'if-none-match': etag } });
    assert.equal(again.status, 304);

    // 2 MiB in one PATCH over HTTP/2 reaches the coordinator, which answers it (the console holds
    // no turn): the coordinator's own refusal, not the proxy's.
    const patch = await client.request('PATCH', '/api/circuits/register/contributions/no-such-upload', {
      headers: { 'tus-resumable': '1.0.0', 'upload-offset': '0', 'content-type': 'application/offset+octet-stream' },
      body: Buffer.alloc(2 * 1024 * 1024, 7),
    });
    assert.equal(patch.status, 409, patch.body.toString());
    assert.equal((JSON.parse(patch.body.toString()) as { error: { code: string } }).error.code, 'lobby.not_your_turn');
  },
);

interface WorkerHandle {
  name: string;
  log: GroupProcess;
}

/**
 * The first verification caught in the middle: the queue's active jobs are polled every few
 * milliseconds (a verification on the test circuits takes tens of them, less than a worker's log
 * takes to reach the host), the worker that holds one is frozen at once (its process stopped from
 * the host), and killed if the job is still active; one that had already finished is let go on,
 * and the next is tried. The polling ends with `contributor`: once it is done, no verification is
 * left to catch. Answers the killed worker's index and the contribution it was verifying.
 */
async function killWorkerMidVerification(
  workers: WorkerHandle[],
  hosts: string[],
  queue: Queue,
  contributor: Promise<unknown>,
): Promise<{ killed: number; contributionId: string; attempt: number }> {
  const pids = await Promise.all(workers.map((w) => stack!.project.hostPid(w.name)));
  let contributorDone = false;
  const ended = (): void => void (contributorDone = true);
  contributor.then(ended, ended); // its own failure is the test's to report, where it awaits it
  const tried = new Set<string>();
  while (!contributorDone) {
    const active = await queue.getJobs(['active']);
    const job = active.find((each) => each.id !== undefined && !tried.has(each.id));
    const index = job ? hosts.findIndex((host) => job.processedBy === workerName(host)) : -1;
    if (!job || index < 0) {
      await new Promise((resolve) => setTimeout(resolve, 2));
      continue;
    }
    tried.add(job.id!);
    process.kill(pids[index]!, 'SIGSTOP');
    if ((await job.getState()) === 'active') {
      await podman(['kill', '--signal', 'KILL', workers[index]!.name]);
      const contributionId = (job.data as { contributionId: string }).contributionId;
      return { killed: index, contributionId, attempt: tried.size };
    }
    process.kill(pids[index]!, 'SIGCONT');
  }
  throw new Error(`the contributor finished with no verification caught running (${tried.size} tried)`);
}

/** A verification worker's name in BullMQ (`processedBy`): its container's hostname and its one slot. */
const workerName = (host: string): string => `${host}:1`;

let receiptsFile = '';
const acceptedHashes = new Map<string, string>();

stackTest(
  'a terminal contributor takes a turn on all nine circuits through TLS; a worker killed mid-verification, ' +
    'the other finishes its job and nothing is lost',
  10 * 60_000,
  async (t) => {
    const { project, origin, certificate, workers, work } = stack!;
    const console = await consoleSession();
    t.after(() => console.close());
    await console.json('POST', '/api/admin/phase', { phase: 'open' });

    const redis = await project.address(`${PROJECT}-redis-1`, 'backend');
    const queue = new Queue(DEFAULT_VERIFICATION_QUEUE, { connection: { host: redis, port: 6379 } });
    t.after(() => queue.close());
    receiptsFile = path.join(work, 'receipts.json');
    const contributor = runCli(
      [
        'contribute',
        '--coordinator',
        origin,
        '--semaphore-identity-env',
        'CEREMONY_TEST_IDENTITY',
        '--receipts',
        receiptsFile,
      ],
      {
        env: { CEREMONY_TEST_IDENTITY: member.export(), NODE_EXTRA_CA_CERTS: certificate.caFile },
        timeoutMs: 9 * 60_000,
      },
    );
    const hosts = await Promise.all(
      workers.map(async (w) => (await podman(['inspect', '--format', '{{.Config.Hostname}}', w.name])).stdout.trim()),
    );
    const kill = await killWorkerMidVerification(workers, hosts, queue, contributor);
    const killedName = workers[kill.killed]!.name;
    process.stderr.write(`compose: ${killedName} killed verifying ${kill.contributionId} (try ${kill.attempt})\n`);
    const survivor = workers[1 - kill.killed]!;
    const escaped = kill.contributionId.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    await survivor.log.waitFor(new RegExp(`contribution ${escaped}: valid`), 120_000);
    const job = await queue.getJob(verificationJobId(kill.contributionId));
    assert.equal(job?.processedBy, workerName(hosts[1 - kill.killed]!), 'the surviving worker finished the job');

    const done = await contributor;
    assert.equal(done.code, 0, done.stderr.slice(-4000));
    const lines = done.stdout.trim().split('\n');
    assert.deepEqual(
      lines.map((line) => /^(\w+) #1 contribution hash ([0-9a-f]+)$/.exec(line)?.[1]),
      [...PROJECT_CIRCUITS],
    );
    for (const line of lines) {
      const [circuit, , , , hash] = line.split(' ');
      acceptedHashes.set(circuit!, hash!);
    }
    // Each circuit once, at index 1, with the hash the contributor computed; the transcript chained.
    const transcript = await console.json<{
      entries: Array<{ type: string; circuit?: string; index?: number; contributionHash?: string }>;
    }>('GET', '/api/transcript');
    const contributions = transcript.entries.filter((entry) => entry.type === 'contribution');
    assert.deepEqual(
      contributions.map((e) => [e.circuit, e.index, e.contributionHash]),
      PROJECT_CIRCUITS.map((circuit) => [circuit, 1, acceptedHashes.get(circuit)]),
    );
    const receipts = JSON.parse(await readFile(receiptsFile, 'utf8')) as { receipts: unknown[] };
    assert.equal(receipts.receipts.length, PROJECT_CIRCUITS.length);
  },
);

/** The data volume's transcript, read on the host. */
async function transcriptTypes(): Promise<string[]> {
  const file = path.join(await stack!.project.volumePath('ceremony-data'), 'transcript', 'transcript.jsonl');
  return (await readFile(file, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { type: string }).type);
}

stackTest(
  "while the coordinator finalises, `compose run … finalise` is refused by the writers' lock; " +
    'the stack stops in the middle of it',
  5 * 60_000,
  async (t) => {
    const { project, server } = stack!;
    const console = await consoleSession();
    t.after(() => console.close());
    await console.json('POST', '/api/admin/phase', { phase: 'closed' });
    const from = server.output().length;
    const finalising = console.request('POST', '/api/admin/finalise', {
      json: { beacon: TEST_BEACON, iterations: SLOW_BEACON_ITERATIONS },
    });
    finalising.catch(() => {}); // cut off when the stack stops
    await waitUntil(() => server.output().slice(from).includes('finalisation started'), 'finalisation started', 60_000);

    const refused = await project.run('server', [
      'finalise',
      '--data',
      '/data',
      '--beacon',
      TEST_BEACON,
      '--iterations',
      '10',
    ]);
    assert.equal(refused.code, 1, refused.stdout + refused.stderr);
    assert.match(
      refused.stderr,
      /^error \[ceremony\.locked\]: another ceremony process \(`ceremony serve`, pid 1 on host /m,
    );
    assert.ok(!(await transcriptTypes()).includes('beacon'), 'the refused finalise wrote nothing');

    await project.stop(10);
    assert.ok(!(await transcriptTypes()).includes('beacon'), 'the coordinator was stopped before its first beacon');
  },
);

stackTest(
  'stopped: `compose run … finalise` and `publish` pass, and the host audits the publication and the receipts',
  10 * 60_000,
  async () => {
    const { project, work } = stack!;
    const beacon = ['--beacon', TEST_BEACON, '--iterations', '10'];
    const finalised = await project.run('server', ['finalise', '--data', '/data', ...beacon], { timeoutMs: 600_000 });
    assert.equal(finalised.code, 0, finalised.stderr.slice(-4000));
    for (const circuit of PROJECT_CIRCUITS)
      assert.match(finalised.stdout, new RegExp(`^${circuit} final \\(1 contributions`, 'm'));

    const out = path.join(work, 'published');
    await mkdir(out);
    const published = await project.run('server', ['publish', '/data', '/published/ceremony'], {
      volumes: [`${out}:/published`],
      user: `${process.getuid!()}:${process.getgid!()}`,
    });
    assert.equal(published.code, 0, published.stderr.slice(-4000));
    const folder = path.join(out, 'ceremony');
    const audit = await runCli(['audit', folder, '--ptau-hash', await devPtauHash(), '--quiet'], {
      timeoutMs: 600_000,
    });
    assert.equal(audit.code, 0, audit.stdout + audit.stderr.slice(-4000));
    const receipts = await runCli(['verify-receipt', receiptsFile, folder], { timeoutMs: 300_000 });
    assert.equal(receipts.code, 0, receipts.stdout + receipts.stderr.slice(-4000));
  },
);
