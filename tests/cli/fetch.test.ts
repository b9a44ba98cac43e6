/**
 * `ceremony fetch URL DIR` against a real coordinator serving a small finalised ceremony: the files
 * land where `ceremony publish` puts them, with the same bytes, and `ceremony audit` passes on them
 * with the auditor's own pin; it never audits itself and names no hash to pin. Refusals: a folder
 * not empty (unless --resume, which keeps what is there and removes partial downloads), an HTTP
 * error (a 404: its code, exit 1), a ceremony.json path that leaves DIR, a coordinator of another
 * ceremony, or of other circuits than the auditor's ceremony.json (config.publication_mismatch,
 * before any file); an auditor's ceremony.json that pins no r1cs is told what the audit needs.
 * In-process, with a coordinator's answers altered: a 429 is retried after its Retry-After, a key
 * index that would leave DIR is refused, a queue log that never ends is cut at a million entries,
 * and an r1cs or a ptau other than the auditor's pins is refused as it arrives, before any key.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { copyCeremony, devPtauHash, finalisedCeremony, TWO_CIRCUITS } from '../fixtures/ceremony-fixture.ts';
import { lines, runCli } from '../helpers/run-cli.ts';
import { listFiles } from '../helpers/list-files.ts';
import { tempPathFor } from '../../core/fs/atomic-write.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { fetchCeremony } from '../../core/publish/fetch-ceremony.ts';
import { isCoordinatorError } from '../../core/errors.ts';

let dataDir: string;
let work: string;
let config: string;
let coordinator: TestCoordinator;
let devPtauHashValue: string;

const sha256 = async (file: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(file))
    .digest('hex');

/** A ceremony.json like the auditor's, with `changes` over it, written in the scratch folder. */
async function configWith(name: string, changes: (raw: Record<string, unknown>) => void): Promise<string> {
  const raw = JSON.parse(await readFile(config, 'utf8')) as Record<string, unknown>;
  changes(raw);
  const file = path.join(work, `${name}.json`);
  await writeFile(file, JSON.stringify(raw));
  return file;
}

before(async () => {
  dataDir = await copyCeremony((await finalisedCeremony(TWO_CIRCUITS)).dataDir);
  work = await mkdtemp(path.join(tmpdir(), 'fetch-test-'));
  // The auditor's checkout: a ceremony.json of their own, not the served folder's.
  config = path.join(work, 'auditor-ceremony.json');
  await writeFile(config, await readFile(path.join(dataDir, 'ceremony.json')));
  coordinator = await startTestCoordinator({ dataDir, open: false });
  devPtauHashValue = await devPtauHash();
});

after(async () => {
  await coordinator?.close();
  await cleanUp(dataDir, work);
});

describe('ceremony fetch', () => {
  let fetched: string;

  test('lays a finalised ceremony out as `ceremony publish` does, and the audit passes on it', async () => {
    fetched = path.join(work, 'fetched');
    const result = await runCli(['fetch', coordinator.url, fetched, '--config', config]);
    assert.equal(result.code, 0, result.stderr);
    const out = lines(result.stdout);
    assert.match(out[0]!, /^fetched \d+ files \([\d.]+ MB\) of shielded-pool-phase2-testnet into /);
    // The audit reads the same ceremony.json: the one given, since it is not the checkout's.
    assert.equal(out[1], `next: ceremony audit ${fetched} --config ${config}`);
    // The dev ptau is no public file: the auditor is told to pin it, and given no hash to pin.
    assert.match(out[2]!, /no known public file: the audit needs --ptau-hash .*never from this coordinator/);
    assert.doesNotMatch(result.stdout, new RegExp(await devPtauHash()));
    assert.match(result.stderr, /downloading chains\/register\/register_0002\.zkey/, 'progress on stderr');

    const published = path.join(work, 'published');
    await publishCeremony(dataDir, published);
    const fetchedFiles = await listFiles(fetched);
    const publishedFiles = await listFiles(published);
    assert.deepEqual(
      fetchedFiles,
      publishedFiles.filter((f) => f !== 'SHA256SUMS' && !f.endsWith('.circom')),
      'the publication less SHA256SUMS and the circom sources',
    );
    assert.ok(fetchedFiles.includes('final/compiler.json') && fetchedFiles.includes('receipt-public-key.pem'));
    for (const file of fetchedFiles) {
      if (file === 'ceremony.json') {
        assert.equal(await readFile(path.join(fetched, file), 'utf8'), await readFile(config, 'utf8'), 'the auditor’s');
      } else if (file !== 'transcript/transcript.jsonl') {
        // (The transcript is rebuilt from /api/transcript's entries, re-serialised; the audit checks its chain.)
        assert.equal(await sha256(path.join(fetched, file)), await sha256(path.join(published, file)), file);
      }
    }

    // The fixture's links were made outside the coordinator's lobby, so its queue log (the rules
    // alone) accepts none of them: the audit is asked about the rest, as of a ceremony without one,
    // which the auditor has to say (--no-queue-log), and the finding says the order is not checked.
    await rm(path.join(fetched, 'transcript', 'queue-log.jsonl'));
    const audit = await runCli(
      ['audit', fetched, '--no-queue-log', '--config', config, '--ptau-hash', await devPtauHash(), '--quiet'],
      {
        timeoutMs: 300_000,
      },
    );
    assert.equal(audit.code, 0, audit.stdout + audit.stderr);
    assert.match(audit.stdout, /audit passed/);
    assert.match(audit.stdout, /^queue log ok: no transcript\/queue-log\.jsonl published, .*NOT checked$/m);
  });

  test('refuses a folder that is not empty; --resume keeps the files there and completes the rest', async () => {
    const again = await runCli(['fetch', coordinator.url, fetched, '--config', config, '--quiet']);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error \[fetch\.dir_not_empty\]: /);

    const resumed = path.join(work, 'resumed');
    await mkdir(path.join(resumed, 'chains', 'register'), { recursive: true });
    const kept = path.join(resumed, 'chains', 'register', 'register_0001.zkey');
    await writeFile(kept, 'a whole file from an earlier run');
    // A download cut off (Ctrl-C) mid-key, under the temporary name the fetch gave it.
    const partial = tempPathFor(path.join(resumed, 'chains', 'register', 'register_0002.zkey'));
    await writeFile(partial, 'the first bytes of a key');
    const result = await runCli(['fetch', coordinator.url, resumed, '--config', config, '--resume', '--quiet']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /; 1 already there kept; 1 partial download removed\n/);
    assert.equal(existsSync(partial), false, 'the partial download is gone');
    assert.equal(await readFile(kept, 'utf8'), 'a whole file from an earlier run');
    const files = await listFiles(resumed);
    assert.deepEqual(files, [...(await listFiles(fetched)), 'transcript/queue-log.jsonl'].sort());
  });

  test('an HTTP error names the request and its status, with fetch.http_error and exit 1', async () => {
    const dir = path.join(work, 'not-found');
    const result = await runCli(['fetch', `${coordinator.url}/no-such-prefix`, dir, '--config', config, '--quiet']);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp('^error \\[fetch\\.http_error\\]: GET /api/ceremony \\(the ceremony\\): HTTP 404 Error Cannot GET '),
    );
    assert.deepEqual(await listFiles(dir), [], 'nothing written');
  });

  test('refuses a ceremony.json whose ptau or r1cs path leaves DIR, before any request', async () => {
    const outside = await configWith('outside', (raw) => (raw.ptau = '../escaped.ptau'));
    const absolute = await configWith('absolute', (raw) => {
      (raw.circuits as Array<Record<string, unknown>>)[0]!.r1cs = path.join(work, 'escaped.r1cs');
    });
    for (const file of [outside, absolute]) {
      const dir = path.join(work, `escape-${path.basename(file, '.json')}`);
      const result = await runCli(['fetch', coordinator.url, dir, '--config', file, '--quiet']);
      assert.equal(result.code, 1, result.stderr);
      assert.match(
        result.stderr,
        /^error \[config\.invalid\]: the (ptau|r1cs of register) \(.+\) is outside the folder/,
      );
      assert.equal(existsSync(dir), false);
    }
    assert.equal(existsSync(path.join(work, 'escaped.ptau')) || existsSync(path.join(work, 'escaped.r1cs')), false);
  });

  test('refuses a coordinator serving other circuits than the auditor’s, naming the first difference', async () => {
    const renamed = await configWith('renamed', (raw) => {
      (raw.circuits as Array<Record<string, unknown>>)[1]!.verifier = 'VerifierOther';
    });
    const dir = path.join(work, 'renamed');
    const result = await runCli(['fetch', coordinator.url, dir, '--config', renamed, '--quiet']);
    assert.equal(result.code, 1);
    assert.match(
      result.stderr,
      new RegExp(
        '^error \\[config\\.publication_mismatch\\]: the ceremony the coordinator serves is not your ceremony\\.json ' +
          '\\(.*renamed\\.json\\): circuit 2 \\("transact21" in yours\\): ' +
          'its verifier is "VerifierTransact21" in the ' +
          'ceremony the coordinator serves, "VerifierOther" in yours',
      ),
    );
    assert.deepEqual(await listFiles(dir), [], 'nothing fetched');
  });

  test('an auditor’s ceremony.json pinning no r1cs: the next steps say what the audit needs', async () => {
    const unpinned = await configWith('unpinned', (raw) => {
      for (const circuit of raw.circuits as Array<Record<string, unknown>>) delete circuit.r1csHash;
    });
    const result = await runCli([
      'fetch',
      coordinator.url,
      path.join(work, 'unpinned'),
      '--config',
      unpinned,
      '--quiet',
    ]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(
      result.stdout,
      /^your ceremony\.json pins no r1cs hash for register, transact21: the audit needs --r1cs-hash CIRCUIT=/m,
    );
  });

  test('refuses a coordinator of another ceremony than the auditor’s ceremony.json', async () => {
    const other = await configWith('other', (raw) => (raw.id = 'another-ceremony'));
    const result = await runCli(['fetch', coordinator.url, path.join(work, 'other'), '--config', other, '--quiet']);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /^error \[fetch\.other_ceremony\]: .*another-ceremony/);
  });
});

describe('fetchCeremony against altered answers', () => {
  /** The coordinator's fetch, with `alter` answering instead of it where it returns a response. */
  const altered =
    (alter: (route: string, url: URL) => Response | Promise<Response> | undefined): typeof fetch =>
    async (input, init) => {
      const url = new URL(String(input));
      return (await alter(url.pathname, url)) ?? fetch(input, init);
    };

  test('a 429 is waited out for its Retry-After, then the download goes on', async () => {
    const waits: number[] = [];
    let refused = 0;
    const result = await fetchCeremony(coordinator.url, path.join(work, 'rate-limited'), {
      configFile: config,
      fetch: altered((route) =>
        route === '/api/ptau' && refused++ < 2
          ? Response.json(
              { error: { code: 'rate.limited', message: 'slow down' } },
              {
                status: 429,
                headers: { 'retry-after': '7' },
              },
            )
          : undefined,
      ),
      sleep: async (ms) => void waits.push(ms),
    });
    assert.deepEqual(waits, [7000, 7000]);
    assert.equal(result.ptau.known, false);
    assert.ok(existsSync(path.join(work, 'rate-limited', 'ptau', 'dev-pot10-insecure.ptau')));
  });

  test('a Retry-After beyond the longest wait, or retries used up, ends it with fetch.http_error', async () => {
    const tooLong = fetchCeremony(coordinator.url, path.join(work, 'budget'), {
      configFile: config,
      fetch: altered((route) =>
        route === '/api/ptau' ? new Response('', { status: 429, headers: { 'retry-after': '86400' } }) : undefined,
      ),
      sleep: async () => assert.fail('no wait beyond maxRetryWaitMs'),
    });
    await assert.rejects(
      tooLong,
      (error) => isCoordinatorError(error, 'fetch.http_error') && /86400 s/.test(error.message),
    );
    let tries = 0;
    const always = fetchCeremony(coordinator.url, path.join(work, 'always-busy'), {
      configFile: config,
      retries: 3,
      fetch: altered((route) => (route === '/api/ptau' ? (tries++, new Response('', { status: 503 })) : undefined)),
      sleep: async () => {},
    });
    await assert.rejects(
      always,
      (error) => isCoordinatorError(error, 'fetch.http_error') && /after 3 retries/.test(error.message),
    );
    assert.equal(tries, 4);
    assert.equal(existsSync(path.join(work, 'always-busy', 'ptau', 'dev-pot10-insecure.ptau')), false);
  });

  test('a queue log that never ends is refused past a million entries, and none of it is kept', async () => {
    const dir = path.join(work, 'endless-queue-log');
    let pages = 0;
    await assert.rejects(
      fetchCeremony(coordinator.url, dir, {
        configFile: config,
        fetch: altered((route, url) => {
          if (route !== '/api/queue-log') return undefined;
          pages++;
          // Every page full, each entry after the last: a log that always has more.
          const after = Number(url.searchParams.get('after'));
          const limit = Number(url.searchParams.get('limit'));
          return Response.json({ entries: Array.from({ length: limit }, (_, i) => ({ seq: after + 1 + i })) });
        }),
      }),
      (error) => isCoordinatorError(error, 'fetch.bad_answer') && /more than 1000000 entries/.test(error.message),
    );
    assert.equal(pages, 1000, 'the fetch stops at the cap, not before and not after');
    // Read right after the transcript, before anything is written: nothing at all is left.
    assert.deepEqual(await listFiles(dir), [], 'no queue log, whole or partial, is left');
  });

  test('forgery 4: an r1cs or ptau other than the auditor’s pins is refused, and no key fetched', async () => {
    // The coordinator serves another circuit under register's name (here transact21's r1cs).
    const other = await readFile(path.join(dataDir, 'circuits', 'transact21.r1cs'));
    const dir = path.join(work, 'forged-r1cs');
    await assert.rejects(
      fetchCeremony(coordinator.url, dir, {
        configFile: config,
        fetch: altered((route) => (route === '/api/circuits/register/r1cs' ? new Response(other) : undefined)),
      }),
      (error) =>
        isCoordinatorError(error, 'r1cs.hash_mismatch') &&
        /^the r1cs of register the coordinator serves has BLAKE2b-512 [0-9a-f]{128}; your ceremony\.json pins /.test(
          error.message,
        ),
    );
    assert.ok(!(await listFiles(dir)).some((file) => file.startsWith('chains/')), 'no key fetched');

    const pinsPtau = await configWith('pins-ptau', (raw) => (raw.ptauHash = 'ab'.repeat(64)));
    const ptauDir = path.join(work, 'other-ptau');
    await assert.rejects(
      fetchCeremony(coordinator.url, ptauDir, { configFile: pinsPtau }),
      (error) =>
        isCoordinatorError(error, 'ptau.hash_mismatch') &&
        new RegExp(`the ptau the coordinator serves has BLAKE2b-512 ${devPtauHashValue}; your ceremony`).test(
          error.message,
        ),
    );
    assert.ok(!(await listFiles(ptauDir)).some((file) => file.startsWith('chains/')), 'no key fetched');
  });

  test('a transcript whose key index would name a path outside DIR is refused', async () => {
    const transcript = (await (await fetch(`${coordinator.url}/api/transcript`)).json()) as {
      entries: Array<Record<string, unknown>>;
    };
    transcript.entries.find((e) => e.type === 'contribution')!.index = '1/../../../../escaped';
    const dir = path.join(work, 'hostile-index');
    await assert.rejects(
      fetchCeremony(coordinator.url, dir, {
        configFile: config,
        fetch: altered((route) => (route === '/api/transcript' ? Response.json(transcript) : undefined)),
      }),
      (error) => isCoordinatorError(error, 'fetch.bad_answer'),
    );
    assert.deepEqual(await listFiles(dir), []);
  });

  test('a hostile coordinator: no redirect followed, a key named twice, a file beyond the bound', async () => {
    const inits: Array<RequestInit | undefined> = [];
    const watched: typeof fetch = async (input, init) => (inits.push(init), fetch(input, init));
    await fetchCeremony(coordinator.url, path.join(work, 'watched'), { configFile: config, fetch: watched });
    assert.ok(inits.length > 0);
    assert.ok(
      inits.every((init) => init?.redirect === 'error'),
      'a redirect would send the fetch elsewhere under a trusted name',
    );

    const transcript = (await (await fetch(`${coordinator.url}/api/transcript`)).json()) as {
      entries: Array<Record<string, unknown>>;
    };
    const key = transcript.entries.find((e) => e.type === 'contribution')!;
    transcript.entries.push({ ...key });
    await assert.rejects(
      fetchCeremony(coordinator.url, path.join(work, 'twice'), {
        configFile: config,
        fetch: altered((route) => (route === '/api/transcript' ? Response.json(transcript) : undefined)),
      }),
      (error) => isCoordinatorError(error, 'fetch.bad_answer') && /names key \d+ of \w+ twice/.test(error.message),
    );

    const dir = path.join(work, 'endless');
    await assert.rejects(
      fetchCeremony(coordinator.url, dir, {
        configFile: config,
        fetch: altered((route) =>
          route === '/api/ptau' ? new Response('x', { headers: { 'content-length': String(2 ** 40) } }) : undefined,
        ),
      }),
      (error) => isCoordinatorError(error, 'fetch.bad_answer') && /declares 1099511627776 bytes/.test(error.message),
    );
    assert.equal(existsSync(path.join(dir, 'ptau', 'dev-pot10-insecure.ptau')), false);

    // A JSON answer is held in memory: one beyond its bound is refused before it is read.
    const huge = new Response('{}', { headers: { 'content-length': String(2 ** 30) } });
    await assert.rejects(
      fetchCeremony(coordinator.url, path.join(work, 'huge-json'), {
        configFile: config,
        fetch: altered((route) => (route === '/api/transcript' ? huge : undefined)),
      }),
      (error) => isCoordinatorError(error, 'fetch.bad_answer') && /declares 1073741824 bytes/.test(error.message),
    );
  });
});
