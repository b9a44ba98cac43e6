/**
 * A coordinator in its own process for the server benchmarks, so the RSS the parent samples
 * (/proc/PID/status) is the coordinator's alone. Starts on an already-initialised data folder,
 * embedded verifier, open, on loopback with a free port; optionally seeds N waiting
 * contributors straight into SQLite (one session each, through SessionStore, and a join through
 * the Lobby, as demo sign-in + POST /api/me/join would) and writes their cookies to a file.
 *
 * Protocol: one JSON line on stdout when ready, {"url": ..., "pid": ...}; the coordinator's own
 * JSON log lines on stderr; SIGTERM closes it.
 *
 * Usage: tsx bench/coordinator-child.ts --data DIR [--seed-lobby N --cookies FILE]
 */
import { writeFile } from 'node:fs/promises';
import { loadServerConfig } from '../server/config/server-config.ts';
import { startCoordinator } from '../server/start-coordinator.ts';
import { SessionStore } from '../server/auth/session-store.ts';
import { SESSION_COOKIE } from '../server/auth/session-cookie.ts';
import { systemClock } from '../server/clock.ts';
import { parseBenchArgs } from './bench-args.ts';

const { values } = parseBenchArgs(import.meta.url, {
  options: { data: { type: 'string' }, 'seed-lobby': { type: 'string', default: '0' }, cookies: { type: 'string' } },
});
if (!values.data) throw new Error('--data DIR is required');
const seed = Number(values['seed-lobby']);

// The default tick interval (1 s), as in production; joins and verdicts tick at once anyway.
const coordinator = await startCoordinator(
  loadServerConfig({ CEREMONY_DATA: values.data, PORT: '0', OPEN_ON_START: 'true' }),
);

if (seed > 0) {
  if (!values.cookies) throw new Error('--seed-lobby needs --cookies FILE');
  const sessions = new SessionStore(coordinator.db, systemClock, 24 * 60 * 60_000);
  const cookies: string[] = [];
  coordinator.db.transaction(() => {
    for (let i = 0; i < seed; i++) {
      const name = `load-${String(i).padStart(5, '0')}`;
      const issued = sessions.create({ id: `demo:${name}`, kind: 'demo', displayName: name, coordinator: false });
      coordinator.lobby.join(`demo:${name}`);
      cookies.push(`${SESSION_COOKIE}=${issued.token}`);
    }
  })();
  coordinator.lobby.tick();
  await writeFile(values.cookies, cookies.join('\n'));
}

process.stdout.write(`${JSON.stringify({ url: coordinator.url, pid: process.pid })}\n`);
const shutDown = (): void => void coordinator.close().then(() => process.exit(0));
process.once('SIGTERM', shutDown);
// A bench that crashed cannot send SIGTERM: leave when the parent is gone (re-parented).
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) shutDown();
}, 1000).unref();
