/**
 * The path a new coordinator follows, on a fresh clone of this branch's HEAD: `npm install` (whose
 * `prepare` builds dist/ and web/dist), then `npx ceremony init` and `npx ceremony serve`, all
 * with plain Node from dist/ (the embedded verifier too); the three pages load in Chromium with
 * their real content. `ceremony serve` without the built app refuses to start, naming the command.
 * `npm start` prints a coordinator sign-in link that lands a browser in the console; a second
 * start prints another, and the first no longer signs anyone in. A failed build keeps the last
 * dist/ and leaves no temporary folder behind.
 *
 * node_modules is hard-linked from this checkout instead of downloaded (no network here); the
 * install and the build are the real ones.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser } from 'playwright-core';
import { newCeremonyDir, REPO_ROOT, PROJECT_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { echoPageErrors, launchChromium, screenshot } from '../helpers/chromium.ts';
import { startGroup, stopAllGroups, groupAlive, type GroupProcess } from '../helpers/process-group.ts';

const CIRCUITS = PROJECT_CIRCUITS;
let work: string;
let clone: string;
let dataDir: string;
let browser: Browser | undefined;

/** The environment of a coordinator's shell: nothing of this test run's own settings. */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const {
    REDIS_URL: _r,
    COORDINATOR_TOKEN: _t,
    PORT: _p,
    HOST: _h,
    CEREMONY_DATA: _d,
    NODE_OPTIONS: _o,
    ...env
  } = process.env;
  return { ...env, ...extra };
}

function run(
  command: string,
  args: string[],
  cwd: string,
  timeoutMs = 600_000,
): { status: number | null; output: string } {
  const result = spawnSync(command, args, {
    cwd,
    env: shellEnv(),
    encoding: 'utf8',
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

function mustRun(command: string, args: string[], cwd: string, timeoutMs?: number): string {
  const result = run(command, args, cwd, timeoutMs);
  assert.equal(result.status, 0, `${command} ${args.join(' ')} failed:\n${result.output}`);
  return result.output;
}

/** Stops the whole group with SIGTERM: the coordinator shuts down by itself (exit 0 after npm/npx). */
async function stopped(process: GroupProcess): Promise<void> {
  const { code, signal, lingered } = await process.stop('SIGTERM');
  assert.equal(lingered, false, 'a process of the group was still running when the grace period ended');
  assert.ok(code === 0 || signal === 'SIGTERM', `stopped with ${code ?? signal}:\n${process.output()}`);
  assert.match(process.output(), /"message":"shutting down"/);
  assert.equal(groupAlive(process.child.pid!), false, 'a process of the group outlived the stop');
}

before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'fresh-clone-'));
  clone = path.join(work, 'app');
  const head = mustRun('git', ['rev-parse', 'HEAD'], REPO_ROOT).trim();
  mustRun('git', ['clone', '--quiet', '--no-checkout', REPO_ROOT, clone], work);
  mustRun('git', ['checkout', '--quiet', '--detach', head], clone);
  assert.equal(existsSync(path.join(clone, 'dist')), false, 'a clone has no build');
  // Hard links (a copy where they cannot be made): the same packages without a network install.
  if (run('cp', ['-al', path.join(REPO_ROOT, 'node_modules'), path.join(clone, 'node_modules')], work).status !== 0) {
    mustRun('cp', ['-a', path.join(REPO_ROOT, 'node_modules'), path.join(clone, 'node_modules')], work);
  }
  const install = mustRun('npm', ['install', '--offline', '--no-audit', '--no-fund'], clone);
  assert.match(install, /built dist\/ in/, `npm install did not build the app:\n${install}`);
  assert.match(install, /built web\/dist\/ in/, `npm install did not build the browser app:\n${install}`);
  dataDir = await newCeremonyDir({ parentDir: work });
});

after(async () => {
  await browser?.close();
  await stopAllGroups();
  if (work) await rm(work, { recursive: true, force: true });
});

test('npm install builds the app; `npx ceremony` runs it with plain Node and answers --help from dist/', () => {
  assert.ok(existsSync(path.join(clone, 'dist', 'cli', 'main.js')));
  assert.ok(existsSync(path.join(clone, 'dist', 'worker', 'embedded-verifier.js')));
  assert.ok(existsSync(path.join(clone, 'web', 'dist', 'index.html')));
  const help = run('npx', ['--offline', 'ceremony', '--help'], clone);
  assert.equal(help.status, 0, help.output);
  assert.match(help.output, /^\s+serve\s+run the coordinator server/m);
  assert.doesNotMatch(help.output, /tsx/, 'the compiled app was not used');
});

test(
  '`ceremony serve` on the fresh clone serves /, /ceremony/ and /console/ with their content',
  { timeout: 600_000 },
  async () => {
    mustRun('npx', ['--offline', 'ceremony', 'init', '--data', dataDir], clone);

    // Without the browser app: a refusal that says what to run, not Express's "Cannot GET".
    await rename(path.join(clone, 'web', 'dist'), path.join(clone, 'web', 'dist-aside'));
    const refused = run('npx', ['--offline', 'ceremony', 'serve', '--data', dataDir, '--port', '0'], clone, 120_000);
    await rename(path.join(clone, 'web', 'dist-aside'), path.join(clone, 'web', 'dist'));
    assert.equal(refused.status, 1, refused.output);
    assert.match(refused.output, /error \[config\.invalid\]: the browser app is not built.*`npm run build`/);

    const serve = startGroup('npx', ['--offline', 'ceremony', 'serve', '--data', dataDir, '--port', '0'], {
      cwd: clone,
      env: shellEnv(),
      label: 'ceremony serve',
    });
    const [, url] = await serve.waitFor(/coordinator listening on (http:\/\/\S+)/);
    // The embedded verifier is the compiled one, forked with plain Node.
    const [, verifierPid] = await serve.waitFor(/"embedded verifier ready","pid":(\d+)/);
    const cmdline = (await readFile(`/proc/${verifierPid}/cmdline`, 'utf8')).split('\0');
    assert.ok(
      cmdline.includes(path.join(clone, 'dist', 'worker', 'embedded-verifier.js')),
      `verifier runs ${cmdline.join(' ')}`,
    );
    assert.doesNotMatch(serve.output(), /running the sources through tsx/);

    browser = await launchChromium();
    const page = await (await browser.newContext()).newPage();
    echoPageErrors(page, 'fresh-clone');

    const contribute = await page.goto(`${url}/`);
    assert.equal(contribute?.status(), 200);
    assert.equal((await page.textContent('#page-title', { timeout: 30_000 }))?.trim(), 'Contribute to the ceremony');
    assert.match((await page.textContent('main'))!, /proving keys of 9 circuits/);

    const ceremony = await page.goto(`${url}/ceremony/`);
    assert.equal(ceremony?.status(), 200);
    await page.waitForSelector('#circuits', { timeout: 30_000 });
    const circuitsText = (await page.textContent('#circuits'))!;
    for (const name of CIRCUITS) assert.ok(circuitsText.includes(name), `/ceremony/ does not list ${name}`);
    assert.equal(await page.getAttribute('#phase', 'data-phase'), 'setup');

    const consolePage = await page.goto(`${url}/console/`);
    assert.equal(consolePage?.status(), 200);
    await page.waitForSelector('#sign-in h1', { timeout: 30_000 });
    assert.equal((await page.textContent('#sign-in h1'))?.trim(), 'Coordinator console');
    await screenshot(page, 'fresh-clone-console');

    await stopped(serve);
  },
);

test(
  '`npm start` prints a coordinator sign-in link that lands in the console; a restart ends it',
  { timeout: 600_000 },
  async () => {
    const env = shellEnv({ CEREMONY_DATA: dataDir, PORT: '0' });
    const start = async (): Promise<{ process: GroupProcess; link: string; url: string }> => {
      const process = startGroup('npm', ['start'], { cwd: clone, env, label: 'npm start' });
      const [, link] = await process.waitFor(/sign in as coordinator \(this run only\): (http:\/\/\S+)/);
      const [, url] = await process.waitFor(/coordinator listening on (http:\/\/\S+)/);
      return { process, link: link!, url: url! };
    };

    browser ??= await launchChromium();
    const first = await start();
    assert.match(first.link, /\/auth\/coordinator-link\?token=[A-Za-z0-9_-]{43}$/);
    const page = await (await browser.newContext()).newPage();
    echoPageErrors(page, 'coordinator-link');
    await page.goto(first.link);
    await page.waitForSelector('#console-phase', { timeout: 30_000 });
    assert.equal(new URL(page.url()).pathname, '/console/');
    assert.equal(new URL(page.url()).search, '', 'the token stays in the address bar');
    assert.match((await page.textContent('main'))!, /Signed in as coordinator\./);
    assert.equal(await page.getAttribute('#console-phase', 'data-phase'), 'open');
    await screenshot(page, 'coordinator-link-console');
    await stopped(first.process);

    const second = await start();
    assert.notEqual(new URL(second.link).searchParams.get('token'), new URL(first.link).searchParams.get('token'));
    // The first run's link, on the second server (same port or not): refused, no session.
    const stale = new URL(first.link);
    const staleLink = `${second.url}${stale.pathname}${stale.search}`;
    const fresh = await (await browser.newContext()).newPage();
    const refused = await fresh.goto(staleLink);
    assert.equal(refused?.status(), 403);
    assert.equal(JSON.parse(await refused!.text()).error.code, 'auth.not_coordinator');
    const session = await fresh.evaluate(async () => (await fetch('/auth/session')).json());
    assert.deepEqual(session, { principal: null });
    // The new link does sign in.
    await fresh.goto(second.link);
    await fresh.waitForSelector('#console-phase', { timeout: 30_000 });
    await stopped(second.process);
  },
);

test(
  'a dist/ older than the sources is never run: `ceremony` runs the sources and says so until `npm run build`',
  { timeout: 600_000 },
  async () => {
    const rebuildNothing = mustRun('npm', ['run', 'build'], clone);
    assert.doesNotMatch(rebuildNothing, /built (web\/)?dist\//, 'a current build was rebuilt');
    const usage = run('node', ['scripts/build.js', 'everything'], clone);
    assert.equal(usage.status, 2);
    assert.match(usage.output, /error \[usage\.invalid_arguments\]: unknown build part "everything"/);

    // An edit after the build: a marker only the sources print.
    const source = path.join(clone, 'cli', 'commands', 'index.ts');
    const original = await readFile(source, 'utf8');
    await writeFile(source, original.replace("'run the coordinator server", "'EDITED run the coordinator server"));
    const stale = run('npx', ['--offline', 'ceremony', '--help'], clone);
    assert.equal(stale.status, 0, stale.output);
    assert.match(stale.output, /note: dist\/ is older than the sources; running the sources through tsx/);
    assert.match(stale.output, /EDITED run the coordinator server/);

    const rebuilt = mustRun('npm', ['run', 'build'], clone);
    assert.match(rebuilt, /built dist\/ in/);
    assert.doesNotMatch(rebuilt, /built web\/dist\//, 'the browser app did not change');
    const current = run('npx', ['--offline', 'ceremony', '--help'], clone);
    assert.doesNotMatch(current.output, /note: /);
    assert.match(current.output, /EDITED run the coordinator server/, 'the rebuilt dist/ has the edit');
  },
);

test("a failed build keeps the last dist/ and leaves no temporary folder; a killed build's is swept", async () => {
  // tsc made to fail after writing part of its output (the clone's own file: node_modules is hard-linked,
  // so the real tsc is moved aside, not written over).
  const tsc = path.join(clone, 'node_modules', 'typescript', 'bin', 'tsc');
  await rename(tsc, `${tsc}.aside`);
  const abandoned = path.join(clone, `dist.tmp-${deadPid()}`);
  try {
    await writeFile(
      tsc,
      "const fs = require('node:fs'); const out = process.argv[process.argv.indexOf('--outDir') + 1];\n" +
        "fs.mkdirSync(out, { recursive: true }); fs.writeFileSync(out + '/half.js', ''); process.exit(2);\n",
    );
    await mkdir(abandoned);
    const stamp = await readFile(path.join(clone, 'dist', '.build-stamp'), 'utf8');
    const failed = run('node', ['scripts/build.js', 'dist', '--force'], clone);
    assert.equal(failed.status, 2, failed.output);
    assert.deepEqual(
      (await readdir(clone)).filter((name) => name.startsWith('dist.tmp-')),
      [],
      'a temporary build folder was left behind',
    );
    assert.equal(await readFile(path.join(clone, 'dist', '.build-stamp'), 'utf8'), stamp, 'dist/ was replaced');
  } finally {
    await rm(tsc, { force: true });
    await rename(`${tsc}.aside`, tsc);
  }
});

/** A process id no process has now, for a folder a killed build would have left. */
function deadPid(): number {
  for (let pid = 4_000_000; ; pid--) {
    try {
      process.kill(pid, 0);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ESRCH') return pid;
    }
  }
}
