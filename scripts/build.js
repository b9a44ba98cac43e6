#!/usr/bin/env node
/**
 * `npm run build` (also run by `npm install` through `prepare`, by `npm start` and by `npm test`):
 * compiles core/, client/, cli/, server/, worker/ and the test-network start script to dist/ with tsc
 * (tsconfig.build.json), and builds the browser app to web/dist with Vite. A part whose stamp is
 * newer than all its sources is skipped, so running it again costs a few milliseconds.
 *
 *   node scripts/build.js [dist|web ...] [--force]
 *
 * dist/ is written to a temporary folder and renamed into place, so a failed or interrupted
 * build never leaves a half-written dist/ that looks current. A failed build removes its temporary
 * folder; one killed outright leaves it to the next build, which removes it.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, readdirSync, renameSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PARTS, REPO_ROOT, buildState } from '../core/runtime/build-state.js';

const args = process.argv.slice(2);
const force = args.includes('--force');
const unknown = args.filter((a) => a !== '--force' && !(a in PARTS));
if (unknown.length > 0) {
  process.stderr.write(
    `error [usage.invalid_arguments]: unknown build part ` +
      `${unknown.map((a) => `"${a}"`).join(', ')} (expected: ` +
      `${Object.keys(PARTS).join(', ')}, --force)\n`,
  );
  process.exit(2);
}
const parts = args.filter((a) => a in PARTS);
const wanted = parts.length > 0 ? parts : Object.keys(PARTS);

function tool(relative, name) {
  const file = path.join(REPO_ROOT, 'node_modules', relative);
  if (!existsSync(file)) {
    // `npm install --omit=dev` in a checkout runs prepare without the build tools: not a failure,
    // `ceremony` then runs the sources through tsx (a runtime dependency) and says so.
    if (process.env.npm_lifecycle_event === 'prepare') {
      process.stderr.write(`note: ${name} is not installed (dev dependencies omitted); skipping the build\n`);
      process.exit(0);
    }
    process.stderr.write(
      `error [config.invalid]: ${name} is not installed; the build needs the dev dependencies (run \`npm install\`)\n`,
    );
    process.exit(1);
  }
  return file;
}

// A stamp carries the time the build started: a source saved while tsc or Vite ran is newer than
// it, so the next check sees the part as stale instead of taking the build for current.
const buildStarted = new Date();
function writeStamp(file) {
  writeFileSync(file, `${buildStarted.toISOString()}\n`);
  utimesSync(file, buildStarted, buildStarted);
}

/** Data files the compiled modules read next to themselves (e.g. core/fees/published-fees.json): tsc copies none. */
function copyDataFiles(tmp) {
  for (const root of ['core', 'client', 'server', 'worker', 'cli']) {
    for (const entry of readdirSync(path.join(REPO_ROOT, root), { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith('.json')) continue;
      const relative = path.relative(REPO_ROOT, path.join(entry.parentPath, entry.name));
      cpSync(path.join(REPO_ROOT, relative), path.join(tmp, relative));
    }
  }
}

/** A build tool that failed; its own output already said why. Thrown, not exited, so `finally` cleans up. */
class ToolFailed extends Error {
  constructor(status) {
    super(`build tool exited with ${status}`);
    this.status = status;
  }
}

function run(file, argv) {
  const result = spawnSync(process.execPath, [file, ...argv], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (result.status !== 0) throw new ToolFailed(result.status ?? 1);
}

/** Whether process `pid` still runs (EPERM: it does, as another user's). */
function processRuns(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** A build killed outright (SIGKILL, a power cut) cannot clean up: its dist.tmp-PID stays until this sweep. */
function removeAbandonedTemps() {
  for (const name of readdirSync(REPO_ROOT)) {
    const pid = /^dist\.tmp-(\d+)$/.exec(name)?.[1];
    if (pid !== undefined && !processRuns(Number(pid)))
      rmSync(path.join(REPO_ROOT, name), { recursive: true, force: true });
  }
}

const builders = {
  dist() {
    removeAbandonedTemps();
    const tmp = path.join(REPO_ROOT, `dist.tmp-${process.pid}`);
    try {
      run(tool('typescript/bin/tsc', 'TypeScript'), ['-p', 'tsconfig.build.json', '--outDir', tmp]);
      copyDataFiles(tmp);
      writeStamp(path.join(tmp, '.build-stamp'));
      rmSync(path.join(REPO_ROOT, 'dist'), { recursive: true, force: true });
      renameSync(tmp, path.join(REPO_ROOT, 'dist'));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  },
  web() {
    run(tool('vite/bin/vite.js', 'Vite'), ['build', '--logLevel', 'warn']);
    writeStamp(path.join(REPO_ROOT, PARTS.web.stamp));
  },
};

try {
  for (const part of wanted) {
    const state = buildState(part);
    if (state === 'no-sources') continue;
    if (!force && state === 'current') continue;
    const started = Date.now();
    builders[part]();
    process.stderr.write(`built ${PARTS[part].out}/ in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
} catch (error) {
  if (!(error instanceof ToolFailed)) throw error;
  process.exitCode = error.status;
}
