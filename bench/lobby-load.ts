/**
 * Lobby load: N waiting contributors (default 10,000), each polling `GET /api/me` every 10 s, on
 * loopback against a coordinator in its own process. The contributors are seeded straight into
 * SQLite by the child (a session and a lobby join each); autocannon then sends N/10 requests per
 * second for a bounded time, every request with the next contributor's session cookie, over a
 * pool of keep-alive connections. Goal on 2 cores: p99 < 50 ms, no errors and no non-2xx.
 * autocannon paces each connection on its own timer, so many connections at a low rate each
 * arrive in bursts (100 connections at 10 req/s put ~100 requests in the queue at once); the
 * default of 10 connections gives the smoother arrivals of 10,000 independent pollers.
 *
 * Usage: tsx bench/lobby-load.ts [--contributors N] [--seconds S (default 25)] [--connections C (default 10)]
 *                                [--rate R (default N/10 per second)]
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { initCeremony } from '../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { newCeremonyDir } from '../tests/fixtures/ceremony-fixture.ts';
import { benchLog as log } from './bench-chain.ts';
import { rssOf, startCoordinatorProcess } from './coordinator-process.ts';
import { parseBenchArgs } from './bench-args.ts';

export interface LobbyFigures {
  contributors: number;
  seconds: number;
  rate: number;
  connections: number;
  requests: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  seedSeconds: number;
  rssMb: number;
}

export async function runLobbyLoad(
  contributors: number,
  seconds: number,
  connections: number,
  rate = Math.round(contributors / 10),
): Promise<LobbyFigures> {
  const dataDir = await newCeremonyDir();
  const cookieDir = await mkdtemp(path.join(tmpdir(), 'lobby-load-'));
  try {
    log('initialising the project ceremony (test network, dev ptau)');
    await initCeremony(dataDir);
    const cookieFile = path.join(cookieDir, 'cookies.txt');
    const seedStart = Date.now();
    const coordinator = await startCoordinatorProcess(dataDir, [
      '--seed-lobby',
      String(contributors),
      '--cookies',
      cookieFile,
    ]);
    const seedSeconds = (Date.now() - seedStart) / 1000;
    try {
      const cookies = (await readFile(cookieFile, 'utf8')).split('\n');
      let next = 0;
      log(`autocannon: ${rate} req/s for ${seconds} s over ${connections} connections`);
      const result = await autocannon({
        url: coordinator.url,
        connections,
        duration: seconds,
        overallRate: rate,
        timeout: 10,
        requests: [
          {
            method: 'GET',
            path: '/api/me',
            setupRequest: (request) => ({
              ...request,
              headers: { ...request.headers, cookie: cookies[next++ % cookies.length]! },
            }),
          },
        ],
      });
      return {
        contributors,
        seconds: result.duration,
        rate,
        connections,
        requests: result.requests.total,
        p50: result.latency.p50,
        p90: result.latency.p90,
        p99: result.latency.p99,
        max: result.latency.max,
        errors: result.errors,
        timeouts: result.timeouts,
        non2xx: result.non2xx,
        seedSeconds,
        rssMb: (rssOf(coordinator.pid) ?? 0) / (1024 * 1024),
      };
    } finally {
      await coordinator.stop();
    }
  } finally {
    await rm(dataDir, { recursive: true, force: true });
    await rm(cookieDir, { recursive: true, force: true });
  }
}

export function printLobby(f: LobbyFigures): void {
  process.stdout.write(
    `\nlobby load (${f.contributors} waiting contributors, GET /api/me at ` +
      `${f.rate} req/s for ${f.seconds.toFixed(0)} s, ${f.connections} ` +
      `keep-alive connections)\n` +
      `requests ${f.requests}, latency p50 ${f.p50} ms, p90 ${f.p90} ms, p99 ` +
      `${f.p99} ms (goal < 50), max ${f.max} ms\n` +
      `errors ${f.errors}, timeouts ${f.timeouts}, non-2xx ${f.non2xx} (goal ` +
      `0); seeding + start ${f.seedSeconds.toFixed(1)} s; coordinator RSS ` +
      `after ${f.rssMb.toFixed(0)} MB\n`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: {
      contributors: { type: 'string', default: '10000' },
      seconds: { type: 'string', default: '25' },
      connections: { type: 'string', default: '10' },
      rate: { type: 'string' },
    },
  });
  const contributors = Number(values.contributors);
  printLobby(
    await runLobbyLoad(
      contributors,
      Number(values.seconds),
      Number(values.connections),
      values.rate ? Number(values.rate) : undefined,
    ),
  );
  await releaseBn128();
}
