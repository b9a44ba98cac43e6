/**
 * What the worst request of each route costs the coordinator, on the real `ceremony serve`
 * (compiled, embedded verifier, loopback) of a one-circuit ceremony whose key is --circuit's (rs18:
 * 2^18, 163 MB) or a generated 2^P one (--power), with its default limits. For each route, N
 * requests one after another from one client address: the coordinator's CPU (utime + stime of its
 * process group, /proc, after it settled) per request, the wall time per request, its RSS growth
 * (/proc/PID/status every 20 ms, peak minus the level the phase began at), and the descriptors it
 * holds (/proc/PID/fd) when a request holds any. Then the held downloads: as many as one address
 * may have in progress, each reader stopped after its first bytes (the coordinator waits on it),
 * the next one refused, the descriptors they hold, and how long until the minimum transfer rate
 * closes them.
 *
 * Usage: tsx bench/route-costs.ts [--circuit rs18 | --power P] [--json FILE]
 */
import { once } from 'node:events';
import { readdirSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { connect, type Socket } from 'node:net';
import { ContributorClient } from '../tests/helpers/contributor-client.ts';
import { BENCH_CIRCUIT, compiledBenchCeremony } from './bench-ceremony.ts';
import { benchLog as log } from './bench-chain.ts';
import { killGroupAtExit, RssSampler, startCeremonyServe, type CoordinatorProcess } from './coordinator-process.ts';
import { treeCpuSeconds } from './process-tree-sampler.ts';
import { parseBenchArgs } from './bench-args.ts';

interface RouteFigure {
  route: string;
  request: string;
  n: number;
  cpuMsPerRequest: number;
  wallMsPerRequest: number;
  rssGrowthMb: number;
  outcome: string;
}

const MB = 1024 * 1024;
const settle = (ms = 500): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const openDescriptors = (pid: number): number => readdirSync(`/proc/${pid}/fd`).length;

/** Runs `one` n times in a row against the coordinator, and what it cost it. */
async function measure(
  coordinator: CoordinatorProcess,
  rss: RssSampler,
  route: string,
  request: string,
  n: number,
  one: (i: number) => Promise<number>,
): Promise<RouteFigure> {
  await settle();
  const phase = `${route} ${request}`;
  rss.mark(phase);
  const cpu = treeCpuSeconds(coordinator.groupId);
  const started = performance.now();
  const statuses = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    const status = await one(i);
    statuses.set(status, (statuses.get(status) ?? 0) + 1);
  }
  const wallMs = performance.now() - started;
  await settle(200);
  const cpuMs = (treeCpuSeconds(coordinator.groupId) - cpu) * 1000;
  rss.mark('between');
  const figure: RouteFigure = {
    route,
    request,
    n,
    cpuMsPerRequest: cpuMs / n,
    wallMsPerRequest: wallMs / n,
    rssGrowthMb: rss.growth(phase) / MB,
    outcome: [...statuses].map(([status, count]) => `${count}×${status}`).join(' '),
  };
  log(`${route} ${request}: ${figure.cpuMsPerRequest.toFixed(2)} ms CPU each, ${figure.outcome}`);
  return figure;
}

/** Status of a GET whose body is read to its end. */
async function get(url: string, headers: Record<string, string> = {}): Promise<number> {
  const response = await fetch(url, { headers });
  await response.arrayBuffer();
  return response.status;
}

/** A download whose reader took its first bytes and stopped reading; its status. */
async function heldDownload(url: string, route: string): Promise<{ socket: Socket; status: number }> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write(`GET ${route} HTTP/1.1\r\nHost: ${hostname}\r\n\r\n`);
  const [first] = (await once(socket, 'data')) as [Buffer];
  socket.pause();
  socket.on('error', () => {});
  return { socket, status: Number(/^HTTP\/1\.1 (\d+)/.exec(first.toString('latin1'))?.[1]) };
}

/** Resolves once `count` lines of the coordinator's log say it closed a slow reader's connection. */
async function readersCut(coordinator: CoordinatorProcess, count: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const cut = (): number => coordinator.logs.filter((line) => line.message.includes('minimum transfer rate')).length;
  while (cut() < count) {
    if (Date.now() > deadline) throw new Error(`only ${cut()} of ${count} held downloads were cut off`);
    await settle(250);
  }
}

/** As many held downloads as an address may have, each reader stopped after its first bytes: until each is cut. */
async function heldDownloadsFigure(serve: CoordinatorProcess, rss: RssSampler): Promise<RouteFigure> {
  log('held downloads: as many as an address may have, each reader stopped after its first bytes');
  await settle();
  const before = openDescriptors(serve.pid);
  rss.mark('held');
  const held: Array<Awaited<ReturnType<typeof heldDownload>>> = [];
  for (let i = 0; i < 8; i++) held.push(await heldDownload(serve.url, `/api/circuits/${BENCH_CIRCUIT}/zkeys/0`));
  const next = await fetch(`${serve.url}/api/circuits/${BENCH_CIRCUIT}/zkeys/0`);
  const body = await next.text();
  // A key that fits in the sockets' buffers is sent whole at once: nothing is held.
  const stillHeld = next.status !== 200;
  const refusal = stillHeld ? (JSON.parse(body) as { error?: { code?: string } }).error?.code : 'sent: none held';
  await settle();
  const during = openDescriptors(serve.pid);
  const heldAt = performance.now();
  if (stillHeld) await readersCut(serve, held.length, 5 * 60_000);
  const cutAfterMs = performance.now() - heldAt;
  await settle();
  const after = openDescriptors(serve.pid);
  const figure: RouteFigure = {
    route: 'GET …/zkeys/0',
    request:
      `8 held by one address (the 9th: ${next.status} ${refusal}); ` + `descriptors ${before} → ${during} → ${after}`,
    n: 8,
    cpuMsPerRequest: NaN,
    wallMsPerRequest: cutAfterMs,
    rssGrowthMb: rss.growth('held') / MB,
    outcome: `${held.map((h) => h.status).join(',')}; all closed within ${Math.round(cutAfterMs / 1000)} s`,
  };
  for (const h of held) h.socket.destroy();
  return figure;
}

export async function runRouteCostsBench(target: string | number): Promise<RouteFigure[]> {
  const { dataDir } = await compiledBenchCeremony(target, 'bench-routes');
  let coordinator: CoordinatorProcess | undefined;
  const stopKillingAtExit = killGroupAtExit(() => coordinator);
  const figures: RouteFigure[] = [];
  try {
    log('starting ceremony serve (compiled, embedded verifier, default limits)');
    coordinator = await startCeremonyServe(dataDir);
    const serve = coordinator;
    await serve.waitForLog('embedded verifier ready', undefined, 120_000);
    const rss = new RssSampler(serve.pid);
    const url = serve.url;
    const run = (route: string, request: string, n: number, one: (i: number) => Promise<number>) =>
      measure(serve, rss, route, request, n, one).then((figure) => void figures.push(figure));

    const alice = new ContributorClient(url);
    await alice.signInDemo('alice');
    await alice.join();
    const bob = new ContributorClient(url);
    await bob.signInDemo('bob');
    await bob.join();
    const status = (work: Promise<unknown>) =>
      work.then(
        () => 200,
        (error: { status?: number }) => error.status ?? 0,
      );

    // Unmeasured: the first requests of a process compile its code paths.
    for (let i = 0; i < 300; i++) await get(`${url}/healthz`);
    await run('GET /healthz', 'plain', 2000, () => get(`${url}/healthz`));
    await run('GET /api/ceremony', 'whole answer (no ETag)', 100, () => get(`${url}/api/ceremony`));
    await run('GET /api/transcript', 'whole answer (no ETag)', 100, () => get(`${url}/api/transcript`));
    await run('GET /api/queue-log', 'limit=1000, a name matched over the whole log', 100, () =>
      get(`${url}/api/queue-log?limit=1000&contributor=nobody`),
    );
    await run('GET /api/receipt-key', 'plain', 1000, () => get(`${url}/api/receipt-key`));
    await run('GET /api/me', 'signed in, waiting', 500, () => status(bob.me()));
    await run('GET /api/me', 'past its limit (refused)', 200, () => status(bob.me()));
    await run('GET /api/me/receipts', 'signed in', 25, () => status(bob.request('GET', '/api/me/receipts')));
    await run('GET /api/me/presence', 'opened and closed', 100, async () => {
      const stream = await alice.fetch('GET', '/api/me/presence').catch((error: { status?: number }) => error);
      if (stream instanceof Response) await stream.body?.cancel();
      return stream instanceof Response ? stream.status : (stream.status ?? 0);
    });
    await run('POST /api/circuits/:name/heartbeat', 'not the turn’s holder (refused)', 100, () =>
      status(bob.request('POST', `/api/circuits/${BENCH_CIRCUIT}/heartbeat`)),
    );
    const carol = new ContributorClient(url);
    await carol.signInDemo('carol');
    await run('POST /api/me/join + leave', 'a join and a leave (each logged and signed)', 5, async () => {
      await carol.join();
      return status(carol.request('POST', '/api/me/leave'));
    });
    await run('POST /auth/demo', 'a sign-in', 15, (i) => status(new ContributorClient(url).signInDemo(`signer${i}`)));
    await run('GET /api/nothing', 'no such route (404)', 1000, () => get(`${url}/api/nothing/${'x'.repeat(2000)}`));
    await run('GET …/zkeys/0?q', 'a query string (refused)', 1000, (i) =>
      get(`${url}/api/circuits/${BENCH_CIRCUIT}/zkeys/0?v=${i}`),
    );
    await run('GET …/zkeys/0', 'one byte (a range)', 200, () =>
      get(`${url}/api/circuits/${BENCH_CIRCUIT}/zkeys/0`, { range: 'bytes=0-0' }),
    );
    await run('GET …/zkeys/0', 'the whole head key', 3, () => get(`${url}/api/circuits/${BENCH_CIRCUIT}/zkeys/0`));
    await run('GET …/contribution-inputs/0', 'the first (its skeleton written)', 1, () =>
      get(`${url}/api/circuits/${BENCH_CIRCUIT}/contribution-inputs/0`),
    );
    await run('GET …/contribution-inputs/0', 'again', 3, () =>
      get(`${url}/api/circuits/${BENCH_CIRCUIT}/contribution-inputs/0`),
    );
    const head = (route: string) => fetch(`${url}${route}`, { method: 'HEAD' }).then((r) => r.status);
    await run('HEAD …/r1cs', 'the first (its hash computed, once per file)', 1, () =>
      head(`/api/circuits/${BENCH_CIRCUIT}/r1cs`),
    );
    await run('GET …/r1cs', 'whole', 1, () => get(`${url}/api/circuits/${BENCH_CIRCUIT}/r1cs`));
    await run('HEAD /api/ptau', 'the first (its hash computed, once per file)', 1, () => head('/api/ptau'));
    await run('GET /api/ptau', 'whole', 1, () => get(`${url}/api/ptau`));
    await run('GET /metrics', 'from loopback', 20, () => get(`${url}/metrics`));

    figures.push(await heldDownloadsFigure(serve, rss));
    rss.stop();
    printFigures(figures, target);
    return figures;
  } finally {
    await coordinator?.stop();
    stopKillingAtExit();
    await rm(dataDir, { recursive: true, force: true });
  }
}

function printFigures(figures: RouteFigure[], target: string | number): void {
  const rows = figures.map((f) =>
    [
      f.route,
      f.request,
      String(f.n),
      Number.isNaN(f.cpuMsPerRequest) ? '–' : f.cpuMsPerRequest.toFixed(2),
      f.wallMsPerRequest.toFixed(1),
      f.rssGrowthMb.toFixed(1),
      f.outcome,
    ].join(' | '),
  );
  process.stdout.write(
    `\nRoute costs on ${typeof target === 'number' ? `2^${target}` : target} (coordinator process group)\n` +
      '| route | request | n | CPU ms each | wall ms each | RSS growth MB | outcome |\n' +
      '| --- | --- | --- | --- | --- | --- | --- |\n' +
      rows.map((row) => `| ${row} |`).join('\n') +
      '\n',
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: { circuit: { type: 'string', default: 'rs18' }, power: { type: 'string' }, json: { type: 'string' } },
  });
  const figures = await runRouteCostsBench(values.power ? Number(values.power) : values.circuit);
  if (values.json) await writeFile(values.json, JSON.stringify(figures, null, 2));
}
