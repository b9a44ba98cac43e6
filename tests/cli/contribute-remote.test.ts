/**
 * `ceremony contribute --coordinator URL`, the terminal contributor client, as a real process over
 * real HTTP against a real coordinator (in-process) whose verification runs in a `ceremony worker`
 * process on a real Redis; a small proxy (tests/helpers/tap-proxy.ts) plays the bad network:
 *
 * - usage errors (the two forms mixed, no or two sign-in methods, an unknown circuit) exit 2;
 * - demo sign-in with typed entropy (never echoed) and --receipts (the file is /api/me/receipts);
 * - one byte corrupted in transit: refused in plain words, the next turn accepted; with
 *   --max-attempts 1 the run stops and leaves the queue;
 * - a dropped connection mid-upload: the upload resumes from the coordinator's offset (HEAD, then
 *   PATCH from it, no second creation);
 * - killed (SIGKILL) mid-upload and rerun: the same turn, no second lobby entry, no stray upload on
 *   the coordinator, no leftover keys on the contributor's disk;
 * - Ctrl-C: while waiting it leaves the queue at once; during a turn (on a terminal, through
 *   `script`) it asks first, "no" carries on, "yes" gives the turn to the next in line;
 * - GitHub device flow against the GitHub emulator: authorized, denied, expired, below the minimums;
 * - Semaphore: an identity from a file and from a variable (never printed), one outside the group;
 * - the routes behind it: join with a choice of circuits (validated), leave dropping an unfinished upload.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Identity } from '@semaphore-protocol/identity';
import { newCeremonyDir, REPO_ROOT } from '../fixtures/ceremony-fixture.ts';
import { startRedisServer, type RedisServer } from '../helpers/redis-server.ts';
import { startGroup, stopAllGroups, type GroupProcess } from '../helpers/process-group.ts';
import { startTapProxy, type TapProxy } from '../helpers/tap-proxy.ts';
import {
  githubProfile,
  startGithubEmulator,
  type GithubEmulator,
  type GithubProfile,
} from '../helpers/github-emulator.ts';
import { ContributorClient, HttpError } from '../helpers/contributor-client.ts';
import { runCli } from '../helpers/run-cli.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { terminalWords } from '../../core/error-messages.ts';
import { isTempPath } from '../../core/fs/atomic-write.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';
import { verifyReceipt } from '../../server/contributions/receipt-signer.ts';
import { plainWords } from '../../web/src/api/error-messages.ts';

const BIN = path.join(REPO_ROOT, 'bin', 'ceremony.js');
const TOKEN = 'coordinator-token-for-terminal-client-tests';
const HASH_LINE = (circuit: string): RegExp =>
  new RegExp(`^${circuit} #(\\d+) contribution hash ([0-9a-f]{128})$`, 'm');

let redis: RedisServer;
let worker: GroupProcess;
let coordinator: RunningCoordinator;
let github: GithubEmulator;
let proxy: TapProxy;
let dataDir: string;
/** The CLI's TMPDIR: where its turn keys live, so the tests can see they go. */
let cliTmp: string;
let admin: ContributorClient;
const member = new Identity('terminal client test: a member of the group');
const secondMember = new Identity('terminal client test: another member');
const outsider = new Identity('terminal client test: not in the group');

before(async () => {
  [redis, github] = await Promise.all([startRedisServer(), startGithubEmulator()]);
  dataDir = await newCeremonyDir();
  cliTmp = await mkdtemp(path.join(tmpdir(), 'cli-tmp-'));
  await initCeremony(dataDir);
  worker = startGroup(process.execPath, [BIN, 'worker', '--redis', redis.url], {
    cwd: REPO_ROOT,
    env: process.env,
    label: 'ceremony worker',
  });
  await worker.waitFor(/ready on queue/, 60_000);
  coordinator = await startCoordinator(
    loadServerConfig({
      CEREMONY_DATA: dataDir,
      PORT: '0',
      REDIS_URL: redis.url,
      OPEN_ON_START: 'true',
      COORDINATOR_TOKEN: TOKEN,
      GITHUB_CLIENT_ID: github.clientId,
      GITHUB_CLIENT_SECRET: github.clientSecret,
      GITHUB_AUTHORIZATION_URL: github.authorizationUrl,
      GITHUB_TOKEN_URL: github.tokenUrl,
      GITHUB_USER_PROFILE_URL: github.userProfileUrl,
      GITHUB_DEVICE_CODE_URL: github.deviceCodeUrl,
      SEMAPHORE_GROUP_MEMBERS: `${member.commitment},${secondMember.commitment}`,
      RATE_LIMIT_SIGN_IN: '1000',
      RATE_LIMIT_UPLOAD_CREATION: '1000',
    }),
    { log: { info: () => {}, warn: () => {} }, tickIntervalMs: 100 },
  );
  proxy = await startTapProxy(coordinator.url);
  admin = new ContributorClient(coordinator.url);
  await admin.signInCoordinator(TOKEN);
});

after(async () => {
  await stopAllGroups();
  await proxy?.close();
  await coordinator?.close();
  await worker?.stop('SIGTERM');
  await redis?.stop();
  await github?.close();
  await releaseBn128();
  await rm(dataDir, { recursive: true, force: true });
  await rm(cliTmp, { recursive: true, force: true });
});

function contribute(
  args: string[],
  options: { via?: string; env?: Record<string, string>; input?: string } = {},
): GroupProcess {
  return startGroup(process.execPath, [BIN, 'contribute', '--coordinator', options.via ?? coordinator.url, ...args], {
    cwd: REPO_ROOT,
    env: { ...process.env, TMPDIR: cliTmp, ...options.env },
    input: options.input,
    label: `ceremony contribute ${args.join(' ')}`,
  });
}

async function finished(run: GroupProcess): Promise<{ code: number | null; output: string }> {
  const { code } = await run.exited;
  return { code, output: run.output() };
}

interface QueueView {
  entries: Array<{ circuit: string; contributorId: string }>;
  activeTurns: Array<{ circuit: string; contributorId: string; state: string }>;
}

const queue = (): Promise<QueueView> => admin.request<QueueView>('GET', '/api/admin/queue');

async function transcriptOf(circuit: string): Promise<Array<{ contributor?: string; contributionHash?: string }>> {
  const { entries } = await admin.request<{
    entries: Array<{ type: string; circuit?: string; contributor?: string; contributionHash?: string }>;
  }>('GET', '/api/transcript');
  return entries.filter((e) => e.circuit === circuit && e.type === 'contribution');
}

async function uploadFiles(circuit: string): Promise<string[]> {
  return readdir(path.join(dataDir, 'uploads', circuit)).catch(() => []);
}

/**
 * The circuit's upload folder once it is empty. The verdict is recorded before the coordinator
 * deletes the upload's tus metadata file, so a client can see "accepted" a moment before that.
 */
async function uploadsEmptied(circuit: string): Promise<string[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const files = await uploadFiles(circuit);
    if (files.length === 0 || Date.now() > deadline) return files;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Gina's account, 400 days old, with 3 followers, following 7 and 4 public repositories. */
const ginaProfile = (overrides: Partial<GithubProfile> = {}) =>
  githubProfile(Date.now(), 400, {
    id: 9001,
    login: 'gina',
    followers: 3,
    following: 7,
    public_repos: 4,
    ...overrides,
  });

describe('usage', () => {
  test('--help says which form is the coordinator’s local command and which the contributor’s remote one', async () => {
    const help = await runCli(['contribute', '--help']);
    assert.equal(help.code, 0);
    assert.match(help.stdout, /The coordinator's local command/);
    assert.match(help.stdout, /A contributor's remote command/);
    for (const option of [
      '--coordinator <url>',
      '--github',
      '--semaphore-identity <file>',
      '--semaphore-identity-env <name>',
      '--demo <name>',
      '--receipts <file>',
      '--entropy-prompt',
      '--all',
      '--data <dir>',
    ]) {
      assert.ok(help.stdout.includes(option), `--help lacks ${option}`);
    }
  });

  test('mixed forms, no or two sign-in methods, an unknown circuit or address: usage errors, exit 2', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--coordinator', coordinator.url, '--demo', 'x', '--all'], /--all belongs to the coordinator's local form/],
      [
        ['--coordinator', coordinator.url, '--demo', 'x', '--data', 'somewhere'],
        /--data belongs to the coordinator's local form/,
      ],
      [
        ['register', '--demo', 'x', '--receipts', 'r.json'],
        /--demo, --receipts belong to a contributor's remote form: add --coordinator URL/,
      ],
      [['--coordinator', coordinator.url], /choose how to sign in/],
      [['--coordinator', coordinator.url, '--github', '--demo', 'x'], /sign in one way only, not --github and --demo/],
      [
        ['--coordinator', coordinator.url, '--demo', 'x', 'register', 'nosuch'],
        /this ceremony has no circuit "nosuch"; it has register, treeUpdate/,
      ],
      [['--coordinator', 'ftp://example.org', '--demo', 'x'], /http:\/\/ or https:\/\//],
      [['--coordinator', coordinator.url, '--demo', 'not a name'], /--demo takes a name/],
      [['--coordinator', coordinator.url, '--demo', 'x', '--max-attempts', '0'], /--max-attempts takes a whole number/],
      [['register', 'treeUpdate'], /contributes to one circuit/],
    ];
    for (const [args, message] of cases) {
      const result = await runCli(['contribute', ...args]);
      assert.equal(result.code, 2, `${args.join(' ')}: ${result.stderr}`);
      assert.match(result.stderr, /^error \[usage\.invalid_arguments\]: /m, args.join(' '));
      assert.match(result.stderr, message, args.join(' '));
    }
    const missing = await runCli([
      'contribute',
      '--coordinator',
      coordinator.url,
      '--semaphore-identity',
      path.join(cliTmp, 'no-such-identity'),
    ]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /^error \[input\.file_not_found\]/m);
  });
});

describe('contributing from a terminal', () => {
  test('demo sign-in, typed entropy never echoed, --receipts saves exactly what /api/me/receipts answers', async () => {
    const typed = 'correct horse battery staple 4711';
    const receiptsFile = path.join(cliTmp, 'dora-receipts.json');
    const run = contribute(['--demo', 'dora', '--entropy-prompt', '--receipts', receiptsFile, 'transact22'], {
      input: `${typed}\n`,
    });
    const { code, output } = await finished(run);
    assert.equal(code, 0, output);
    assert.ok(!output.includes(typed) && !output.includes('4711'), 'the typed text is never shown');
    assert.match(output, /signed in to .* as dora \(demo\); contributing to transact22/);
    // This coordinator takes deltas: only the head's inputs came down.
    assert.match(output, /transact22: your turn: downloading the inputs of contribution 0/);
    assert.match(output, /transact22: accepted as contribution #1; it matches the hash computed here/);
    const [, index, hash] = HASH_LINE('transact22').exec(output)!;
    assert.equal(index, '1');
    assert.deepEqual(
      (await transcriptOf('transact22')).map((e) => [e.contributor, e.contributionHash]),
      [['dora', hash]],
    );

    const dora = new ContributorClient(coordinator.url);
    await dora.signInDemo('dora');
    const answered = await dora.request<{
      receipts: Array<{ contributionId: string; body: string; signature: string }>;
    }>('GET', '/api/me/receipts');
    const saved = JSON.parse(await readFile(receiptsFile, 'utf8')) as typeof answered;
    assert.deepEqual(saved, answered);
    assert.equal(saved.receipts.length, 1);
    const { receiptPublicKey } = await dora.request<{ receiptPublicKey: string }>('GET', '/api/ceremony');
    assert.equal(verifyReceipt(saved.receipts[0]!, receiptPublicKey), true);
    assert.equal((JSON.parse(saved.receipts[0]!.body) as { contributionHash: string }).contributionHash, hash);
    assert.match(output, /saved 1 signed receipt to .*dora-receipts\.json \(each signature checked/);
    // The turn's keys went with the run.
    assert.deepEqual(
      (await readdir(cliTmp)).filter((name) => name.startsWith('ceremony-contribute-')),
      [],
    );
  });

  test(
    'one byte corrupted in transit: refused with its reason in plain words ' +
      'and what happens next; the next turn is accepted',
    async () => {
      // Inside L or H of the delta (about 53 kB here): the splice takes it, the verifier refuses it.
      const corrupt = proxy.once('PATCH', /^\/api\/circuits\/register\/contributions\//, 'corrupt', 30_000);
      const run = contribute(['--demo', 'tamper', 'register'], { via: proxy.url });
      const { code, output } = await finished(run);
      await corrupt.reached;
      assert.equal(code, 0, output);
      const refusal = /register: refused \[([a-z_.]+)\]: (.*)/.exec(output);
      assert.ok(refusal, output);
      const refusedCode = refusal[1]!;
      assert.match(refusedCode, /^(zkey|contribution)\./);
      const words = terminalWords(refusedCode);
      assert.equal(refusal[2], words.what);
      assert.equal(words.what, plainWords(refusedCode).what, 'the page’s reason');
      assert.ok(output.includes(`what happens next: ${words.next}`), output);
      assert.match(words.next, /this command contributes again/);
      assert.match(output, /register: accepted as contribution #\d+; it matches the hash computed here/);
      const [, , hash] = HASH_LINE('register').exec(output)!;
      const mine = (await transcriptOf('register')).filter((e) => e.contributor === 'tamper');
      assert.deepEqual(
        mine.map((e) => e.contributionHash),
        [hash],
        'one link, the accepted one',
      );
      const tamper = new ContributorClient(coordinator.url);
      await tamper.signInDemo('tamper');
      const statuses = (await tamper.me()).contributions.map((c) => c.status);
      assert.deepEqual(statuses, ['refused', 'accepted']);
    },
  );

  test('--max-attempts 1 --whole-key: a refusal ends the run (exit 1), the contributor leaves the queue', async () => {
    proxy.once('PATCH', /^\/api\/circuits\/transact23\/contributions\//, 'corrupt', 100_000);
    const { code, output } = await finished(
      contribute(['--demo', 'quitter', '--max-attempts', '1', '--whole-key', 'transact23'], { via: proxy.url }),
    );
    assert.equal(code, 1, output);
    assert.match(output, /transact23: your turn: downloading contribution 0/, 'the whole key, as asked');
    assert.match(
      output,
      new RegExp(
        '^error \\[(zkey|contribution)\\.[a-z_]+\\]: transact23 was refused 1 ' +
          'time \\(the limit, --max-attempts\\); leaving the queue$',
        'm',
      ),
    );
    const { entries, activeTurns } = await queue();
    assert.ok(
      ![...entries, ...activeTurns].some((e) => e.contributorId === 'demo:quitter'),
      'no place left in the lobby',
    );
  });
});

describe('contributing from a terminal: a connection dropped or a run killed mid-upload', () => {
  test(
    'a connection dropped mid-upload: the upload resumes from the ' + 'coordinator’s offset, not from scratch',
    async () => {
      const drop = proxy.once('PATCH', /^\/api\/circuits\/transact21\/contributions\//, 'drop', 16 * 1024);
      const before = proxy.requests.length;
      const { code, output } = await finished(contribute(['--demo', 'roamer', 'transact21'], { via: proxy.url }));
      await drop.reached;
      assert.equal(code, 0, output);
      const uploads = proxy.requests
        .slice(before)
        .filter((r) => r.path.startsWith('/api/circuits/transact21/contributions'));
      assert.deepEqual(
        uploads.map((r) => r.method),
        ['POST', 'PATCH', 'HEAD', 'PATCH'],
        JSON.stringify(uploads),
      );
      const resumedAt = Number(uploads[3]!.uploadOffset);
      assert.ok(resumedAt > 0 && resumedAt <= 16 * 1024, `resumed at ${resumedAt}`);
      assert.match(
        output,
        new RegExp(
          `transact21: uploaded \\(resumed at byte ${resumedAt} after a dropped ` +
            `connection\\) \\(download [\\d.]+ s, contribution [\\d.]+ s, upload [\\d.]+ s\\)`,
        ),
      );
      assert.match(output, /transact21: accepted as contribution #1/);
    },
  );

  test(
    'killed mid-upload and rerun: the same turn is taken again, no second ' +
      'lobby entry, no stray upload or key left behind',
    async () => {
      const hold = proxy.once('PATCH', /^\/api\/circuits\/treeUpdate\/contributions\//, 'hold', 64 * 1024);
      const doomed = contribute(['--demo', 'crash', 'treeUpdate'], { via: proxy.url });
      await hold.reached;
      assert.equal((await doomed.stop('SIGKILL')).signal, 'SIGKILL');
      const afterKill = await queue();
      const held = afterKill.activeTurns.filter((t) => t.contributorId === 'demo:crash');
      assert.deepEqual(
        held.map((t) => [t.circuit, t.state]),
        [['treeUpdate', 'turn']],
        'the turn outlives the client',
      );
      assert.equal(afterKill.entries.filter((e) => e.contributorId === 'demo:crash').length, 0);
      // Beside them the intake that splices the delta as it arrives may hold its temporary key (gone with the upload).
      const partial = await uploadFiles('treeUpdate');
      assert.equal(
        partial.filter((name) => !isTempPath(name)).length,
        2,
        `the killed upload is on the coordinator (data and metadata): ${partial}`,
      );
      assert.ok(
        (await readdir(cliTmp)).some((name) => name.startsWith('ceremony-contribute-')),
        'the killed run left its keys',
      );

      const rerun = contribute(['--demo', 'crash', 'treeUpdate']);
      await rerun.waitFor(/treeUpdate: your turn/, 30_000);
      const during = await queue();
      assert.equal(
        [...during.entries, ...during.activeTurns].filter((e) => e.contributorId === 'demo:crash').length,
        1,
        'one place in the lobby',
      );
      const { code, output } = await finished(rerun);
      assert.equal(code, 0, output);
      assert.match(output, /treeUpdate: accepted as contribution #1/);
      assert.deepEqual(
        await uploadsEmptied('treeUpdate'),
        [],
        'the half upload was replaced, the accepted one moved into the chain',
      );
      const history = coordinator.db
        .prepare("SELECT outcome FROM lobby_turn_history WHERE contributor_id = 'demo:crash'")
        .all();
      assert.deepEqual(history, [{ outcome: 'accepted' }], 'one turn, granted once, ended accepted');
      const rows = coordinator.db.prepare("SELECT status FROM contributions WHERE contributor_id = 'demo:crash'").all();
      assert.deepEqual(rows, [{ status: 'accepted' }], 'the killed upload never became a contribution');
      assert.deepEqual(
        (await readdir(cliTmp)).filter((name) => name.startsWith('ceremony-contribute-')),
        [],
        'the rerun removed the dead run’s keys',
      );
      hold.release();
    },
  );
});

describe('contributing from a terminal: Ctrl-C', () => {
  test(
    'Ctrl-C: during a turn on a terminal it asks first (no: carry on; yes: ' +
      'the turn goes to the next in line); while waiting it leaves at once',
    async () => {
      const download = proxy.once('GET', /^\/api\/circuits\/transact42\/contribution-inputs$/, 'holdResponse');
      const command = [BIN, 'contribute', '--coordinator', proxy.url, '--demo', 'holder', 'transact42']
        .map((a) => `'${a}'`)
        .join(' ');
      // `script` gives the client a terminal: Ctrl-C typed there is a SIGINT, and questions can be asked.
      // `exec`: without it a shell sits between, takes the same SIGINT and, once the client has exited
      // with its own code, may die of it (exit 130).
      const terminal = spawn('script', ['-qfec', `exec ${process.execPath} ${command}`, '/dev/null'], {
        cwd: REPO_ROOT,
        env: { ...process.env, TMPDIR: cliTmp, TERM: 'dumb' },
        stdio: ['pipe', 'pipe', 'pipe'],
        detached: true,
      });
      let screen = '';
      terminal.stdout!.on('data', (d: Buffer) => (screen += d.toString()));
      terminal.stderr!.on('data', (d: Buffer) => (screen += d.toString()));
      const exited = new Promise<number | null>((resolve) => terminal.once('exit', (code) => resolve(code)));
      const seen = async (pattern: RegExp, from = 0): Promise<number> => {
        const deadline = Date.now() + 30_000;
        for (;;) {
          const at = screen.slice(from).search(pattern);
          if (at >= 0) return from + at;
          if (Date.now() > deadline) throw new Error(`no ${pattern} on the terminal:\n${screen}`);
          await new Promise((r) => setTimeout(r, 50));
        }
      };
      try {
        await download.reached;
        terminal.stdin!.write('\u0003');
        const asked = await seen(
          /Leave the queue and give up your turn on transact42\? The work on it is lost\. \[y\/N\]/,
        );
        terminal.stdin!.write('n');
        const carriedOn = await seen(/carrying on with the turn/, asked);
        assert.equal(
          (await queue()).activeTurns.find((t) => t.circuit === 'transact42')?.contributorId,
          'demo:holder',
          'still holding the turn',
        );

        // Meanwhile a second contributor waits behind; Ctrl-C (no terminal: the signal is the answer) leaves at once.
        const waiter = contribute(['--demo', 'waiter', 'transact42']);
        await waiter.waitFor(/transact42: waiting: next in line/, 30_000);
        assert.ok((await queue()).entries.some((e) => e.contributorId === 'demo:waiter'));
        process.kill(-waiter.child.pid!, 'SIGINT');
        const left = await finished(waiter);
        assert.equal(left.code, 1, left.output);
        assert.match(left.output, /left the queue \(interrupted\) for transact42/);
        assert.ok(
          !(await queue()).entries.some((e) => e.contributorId === 'demo:waiter'),
          'the waiter’s entry is gone',
        );

        terminal.stdin!.write('\u0003');
        const askedAgain = await seen(/give up your turn on transact42\?/, carriedOn);
        terminal.stdin!.write('y');
        await seen(/left the queue \(interrupted\): your turn on transact42 goes to the next in line/, askedAgain);
        assert.equal(await exited, 1, screen);
        const after = await queue();
        assert.ok(
          ![...after.entries, ...after.activeTurns].some((e) => e.contributorId === 'demo:holder'),
          'the holder left',
        );
        assert.deepEqual(await uploadFiles('transact42'), []);
      } finally {
        download.release();
        try {
          process.kill(-terminal.pid!, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    },
  );
});

describe('signing in from a terminal', () => {
  async function deviceCode(run: GroupProcess): Promise<string> {
    const [, code] = await run.waitFor(
      /open \S+\/login\/device in a browser and enter the code ([0-9A-F]{4}-[0-9A-F]{4})/,
      30_000,
    );
    return code!;
  }

  test(
    'GitHub device flow: the code is printed, the person authorizes at ' +
      'GitHub, the contribution is made as that account',
    async () => {
      github.setProfile(ginaProfile());
      const run = contribute(['--github', 'transact44']);
      const code = await deviceCode(run);
      assert.equal(await github.actOnDevice(code, 'authorize'), 200);
      const { code: exit, output } = await finished(run);
      assert.equal(exit, 0, output);
      assert.match(output, /as gina \(github\); contributing to transact44/);
      // The emulator is not github.com: the client says so before the code is entered.
      assert.match(output, /warning: http:\/\/127\.0\.0\.1:\d+\/login\/device is not on github\.com/);
      assert.deepEqual(
        (await transcriptOf('transact44')).map((e) => e.contributor),
        ['gina'],
      );
      assert.deepEqual(
        github.deviceCodeRequests().at(-1),
        { client_id: github.clientId, scope: '' },
        'the coordinator asked GitHub, with its own client id',
      );
    },
  );

  test(
    'GitHub device flow: a cancelled authorization and an expired code end ' + 'the run with their reasons (exit 1)',
    async () => {
      github.setProfile(ginaProfile({ id: 9002, login: 'hugo' }));
      const denied = contribute(['--github', 'transact44']);
      await github.actOnDevice(await deviceCode(denied), 'cancel');
      const deniedResult = await finished(denied);
      assert.equal(deniedResult.code, 1, deniedResult.output);
      assert.match(deniedResult.output, /^error \[auth\.device_denied\]: /m);
      assert.ok(deniedResult.output.includes(terminalWords('auth.device_denied').what));

      const expired = contribute(['--github', 'transact44']);
      github.expireDevice(await deviceCode(expired));
      const expiredResult = await finished(expired);
      assert.equal(expiredResult.code, 1, expiredResult.output);
      assert.match(expiredResult.output, /^error \[auth\.device_expired\]: /m);
      assert.ok(expiredResult.output.includes(terminalWords('auth.device_expired').next));
      const { entries, activeTurns } = await queue();
      assert.ok(
        ![...entries, ...activeTurns].some((e) => e.contributorId === 'github:9002'),
        'never signed in, never joined',
      );
    },
  );

  test('GitHub device flow: an account below the minimums is refused with the page’s reason', async () => {
    github.setProfile(ginaProfile({ id: 9003, login: 'ivy', followers: 0 }));
    const run = contribute(['--github', 'transact44']);
    await github.actOnDevice(await deviceCode(run), 'authorize');
    const { code, output } = await finished(run);
    assert.equal(code, 1, output);
    assert.match(output, /^error \[auth\.below_minimum\]: .*followers 0 < 1/m);
    assert.ok(output.includes(plainWords('auth.below_minimum').what), 'the same reason as the page');
  });

  test(
    'Semaphore: an identity from a file or a variable signs in anonymously ' +
      '(never printed); one outside the group is refused',
    async () => {
      const identityFile = path.join(cliTmp, 'identity.txt');
      await writeFile(identityFile, `${member.export()}\n`, { mode: 0o600 });
      const fromFile = await finished(contribute(['--semaphore-identity', identityFile, 'transact82']));
      assert.equal(fromFile.code, 0, fromFile.output);
      assert.match(fromFile.output, /as anonymous \(semaphore, anonymous\); contributing to transact82/);
      assert.ok(!fromFile.output.includes(member.export()), 'the identity is never printed');
      assert.deepEqual(
        (await transcriptOf('transact82')).map((e) => e.contributor),
        ['anonymous'],
      );

      const fromVariable = await finished(
        contribute(['--semaphore-identity-env', 'CEREMONY_TEST_IDENTITY', 'transact84'], {
          env: { CEREMONY_TEST_IDENTITY: member.export() },
        }),
      );
      assert.equal(fromVariable.code, 0, fromVariable.output);
      assert.ok(!fromVariable.output.includes(member.export()));

      const outsiderFile = path.join(cliTmp, 'outsider.txt');
      await writeFile(outsiderFile, outsider.export(), { mode: 0o600 });
      const refused = await finished(contribute(['--semaphore-identity', outsiderFile, 'transact84']));
      assert.equal(refused.code, 1, refused.output);
      assert.match(refused.output, /^error \[auth\.unknown_root\]: .*not in the ceremony's group/m);
      assert.ok(refused.output.includes(plainWords('auth.unknown_root').what));

      await writeFile(outsiderFile, 'not an identity', { mode: 0o600 });
      const garbled = await finished(contribute(['--semaphore-identity', outsiderFile, 'transact84']));
      assert.equal(garbled.code, 2, garbled.output);
      assert.match(
        garbled.output,
        /^error \[input\.invalid\]: the file .* does not hold an exported Semaphore identity/m,
      );
      assert.ok(!garbled.output.includes('not an identity'), 'what was read is not echoed');
    },
  );
});

describe('the routes behind it', () => {
  test('join takes a choice of circuits (checked); leave gives up a turn and drops its unfinished upload', async () => {
    const leaver = new ContributorClient(coordinator.url);
    await leaver.signInDemo('leaver');
    await assert.rejects(
      leaver.request('POST', '/api/me/join', { circuits: ['nosuch'] }),
      (e: unknown) => e instanceof HttpError && e.status === 404 && e.code === 'circuit.unknown',
    );
    await assert.rejects(
      leaver.request('POST', '/api/me/join', { circuits: 'register' }),
      (e: unknown) => e instanceof HttpError && e.status === 400 && e.code === 'request.invalid',
    );
    await assert.rejects(
      leaver.request('POST', '/api/me/join', { circuits: [] }),
      (e: unknown) => e instanceof HttpError && e.code === 'request.invalid',
    );

    const joined = await leaver.request<{ status: { chosenCircuits?: string[] } }>('POST', '/api/me/join', {
      circuits: ['register'],
    });
    assert.deepEqual(joined.status.chosenCircuits, ['register']);
    await leaver.waitFor(
      (me) => me.status.circuits.find((c) => c.circuit === 'register')?.state === 'turn',
      'a turn on register',
    );
    const headSize = (
      await readFile(
        path.join(
          dataDir,
          'chains',
          'register',
          `register_${String(await leaver.headIndex('register')).padStart(4, '0')}.zkey`,
        ),
      )
    ).length;
    const created = await leaver.createUpload('register', { length: headSize + 1000 });
    assert.equal(created.status, 201);
    const patched = await leaver.patch(leaver.uploadUrl(created), 0, new Uint8Array(4096));
    assert.equal(patched.status, 204);
    assert.equal((await uploadFiles('register')).length, 2);

    const left = await leaver.request<{ left: { left: string; circuit?: string } }>('POST', '/api/me/leave');
    assert.deepEqual(left.left, { left: 'turn', circuit: 'register' });
    assert.deepEqual(await uploadFiles('register'), [], 'the unfinished upload is gone');
    const again = await leaver.request<{ left: { left: string } }>('POST', '/api/me/leave');
    assert.deepEqual(again.left, { left: 'nothing' });
    const outsiderClient = new ContributorClient(coordinator.url);
    await assert.rejects(
      outsiderClient.request('POST', '/api/me/leave'),
      (e: unknown) => e instanceof HttpError && e.code === 'auth.required',
    );
  });
});
