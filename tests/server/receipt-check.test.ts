/**
 * Receipts end to end against a real coordinator: two contributors go through a one-circuit
 * ceremony over HTTP, keep their receipts exactly as GET /api/me/receipts answers, and
 * `ceremony verify-receipt --coordinator URL` finds each one in the head before finalisation and
 * in the final key after the console finalises; `ceremony publish` then carries the receipt key,
 * so the same check passes offline. GET /api/receipt-key serves the key /api/ceremony names.
 * On a 2^14 bench chain's final key (about 9 MB), the check, through a proxy counting what the
 * coordinator sends, fetches under 1% of the key, all of it by ranges; a server that answers a
 * range with the whole file is refused rather than downloaded from.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { newCeremonyDir, TEST_BEACON, TEST_BEACON_ITERATIONS } from '../fixtures/ceremony-fixture.ts';
import {
  finalisedChainCeremony,
  servableCopy,
  type FinalisedChainCeremony,
} from '../fixtures/finalised-chain-ceremony.ts';
import { benchChain } from '../../bench/bench-chain.ts';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startCountingProxy, type CountingProxy } from '../helpers/counting-proxy.ts';
import { runCli } from '../helpers/run-cli.ts';
import { listFiles } from '../helpers/list-files.ts';
import { initCeremony } from '../../core/ceremony/init-ceremony.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { publishCeremony } from '../../core/publish/publish-ceremony.ts';
import { loadServerConfig } from '../../server/config/server-config.ts';
import { startCoordinator, type RunningCoordinator } from '../../server/start-coordinator.ts';
import { joined } from '../helpers/joined-regex.ts';
import { ALICE_IN_OPEN_REGISTER_HEAD } from '../helpers/receipts-ceremony.ts';

const quiet = { info: () => {}, warn: () => {} };
const TOKEN = 'coordinator-token-for-tests';
let work: string;

before(async () => {
  work = await mkdtemp(path.join(tmpdir(), 'receipt-check-'));
});

after(async () => {
  await releaseBn128();
  await rm(work, { recursive: true, force: true });
});

describe('receipts from a real coordinator, checked before and after finalisation', () => {
  let dataDir: string;
  let coordinator: RunningCoordinator;
  const files: Record<string, string> = {};

  before(async () => {
    dataDir = await newCeremonyDir({
      circuits: ['register'],
    });
    await initCeremony(dataDir);
    coordinator = await startCoordinator(
      loadServerConfig({ CEREMONY_DATA: dataDir, PORT: '0', OPEN_ON_START: 'true', COORDINATOR_TOKEN: TOKEN }),
      { log: quiet, tickIntervalMs: 100 },
    );
  });

  after(async () => {
    await coordinator?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  test(
    'two contributions over HTTP; each receipts file saved as /api/me/receipts answers it',
    { timeout: 180_000 },
    async () => {
      for (const name of ['alice', 'bob']) {
        const client = new ContributorClient(coordinator.url);
        await client.signInDemo(name);
        await client.join();
        await client.takeTurn('register');
        const answer = await fetch(`${coordinator.url}/api/me/receipts`, { headers: { cookie: client.cookie } });
        assert.equal(answer.status, 200);
        files[name] = path.join(work, `${name}-receipts.json`);
        await writeFile(files[name], await answer.text());
      }
      assert.equal(JSON.parse(await readFile(files.bob!, 'utf8')).receipts.length, 1);
    },
  );

  test('GET /api/receipt-key: the key of /api/ceremony, and of receipt-public-key.pem in the data folder', async () => {
    const answer = await fetch(`${coordinator.url}/api/receipt-key`);
    assert.equal(answer.status, 200);
    assert.match(answer.headers.get('content-type') ?? '', /^application\/x-pem-file/);
    const pem = await answer.text();
    assert.match(pem, /^-----BEGIN PUBLIC KEY-----\n/);
    const ceremony = (await (await fetch(`${coordinator.url}/api/ceremony`)).json()) as { receiptPublicKey: string };
    assert.equal(pem, ceremony.receiptPublicKey);
    assert.equal(await readFile(path.join(dataDir, 'receipt-public-key.pem'), 'utf8'), pem);
  });

  test('before finalisation: included in the current head, and said to be not final yet', async () => {
    const result = await runCli(['verify-receipt', files.alice!, '--coordinator', coordinator.url]);
    assert.equal(result.code, 0, result.stdout + result.stderr);
    assert.match(result.stdout, ALICE_IN_OPEN_REGISTER_HEAD);
    assert.match(result.stdout, /^all 1 receipt included$/m);
    assert.match(result.stderr, /signed by the coordinator's receipt key/, 'progress on stderr');
  });

  test(
    'after the console finalises: included in the final key, over HTTP and offline from the publication',
    { timeout: 120_000 },
    async () => {
      const console_ = new ContributorClient(coordinator.url);
      await console_.signInCoordinator(TOKEN);
      await console_.request('POST', '/api/admin/phase', { phase: 'closed' });
      await console_.request('POST', '/api/admin/finalise', {
        beacon: TEST_BEACON,
        iterations: TEST_BEACON_ITERATIONS,
      });
      for (const [name, index] of [
        ['alice', 1],
        ['bob', 2],
      ] as const) {
        const result = await runCli(['verify-receipt', files[name]!, '--coordinator', coordinator.url]);
        assert.equal(result.code, 0, result.stdout + result.stderr);
        assert.match(
          result.stdout,
          new RegExp(
            `^register #${index} \\(${name}\\) ok: ` + `included in the final key of register at position ${index}$`,
            'm',
          ),
        );
      }
      const published = path.join(work, 'published');
      await publishCeremony(dataDir, published);
      assert.ok(
        (await listFiles(published)).includes('receipt-public-key.pem'),
        'the publication carries the receipt key',
      );
      const offline = await runCli(['verify-receipt', files.bob!, published]);
      assert.equal(offline.code, 0, offline.stdout + offline.stderr);
      assert.match(offline.stdout, /^register #2 \(bob\) ok: included in the final key of register at position 2$/m);
    },
  );
});

describe('a large final key is read by ranges: under 1% of it', () => {
  let chain: FinalisedChainCeremony;
  let coordinator: RunningCoordinator;
  let proxy: CountingProxy;
  let keySize: number;

  before(async () => {
    // Cached after the first run (compile, zkey new, two contributions and finalise: a minute or two).
    chain = await finalisedChainCeremony(await benchChain(14), 'bench14');
    const served = await servableCopy(chain.dataDir, work);
    keySize = (await stat(path.join(served, 'final', `${chain.circuit}.zkey`))).size;
    coordinator = await startCoordinator(loadServerConfig({ CEREMONY_DATA: served, PORT: '0' }), { log: quiet });
    proxy = await startCountingProxy(coordinator.url);
  });

  after(async () => {
    await proxy?.close();
    await coordinator?.close();
  });

  test(
    '`verify-receipt --coordinator` checks a receipt having received < 1% of the final key',
    { timeout: 600_000 },
    async (t) => {
      const result = await runCli(['verify-receipt', chain.receiptsFile('two'), '--coordinator', proxy.url]);
      assert.equal(result.code, 0, result.stdout + result.stderr);
      assert.match(result.stdout, /^mul #2 \(two\) ok: included in the final key of mul at position 2$/m);
      const keyRequests = proxy.requests.filter((r) => r.url.startsWith('/api/final/'));
      assert.ok(
        keyRequests.length > 0 && keyRequests.every((r) => r.status === 206 && r.range !== undefined),
        JSON.stringify(keyRequests),
      );
      const keyBytes = proxy.bytesSent('/api/final/');
      const allBytes = proxy.bytesSent();
      t.diagnostic(
        `final key ${keySize} bytes; sent for it ${keyBytes} bytes (${((keyBytes / keySize) * 100).toFixed(3)}%) ` +
          `in ${keyRequests.length} range requests; everything the check fetched ${allBytes} bytes`,
      );
      assert.ok(keySize > 5_000_000, `a key large enough to make the point (${keySize} bytes)`);
      assert.ok(keyBytes < keySize / 100, `${keyBytes} bytes of the key`);
      assert.ok(allBytes < keySize / 100, `${allBytes} bytes in all`);
    },
  );

  test(
    'a server that answers a range with the whole key is refused, not downloaded from',
    { timeout: 60_000 },
    async () => {
      const noRanges = await startCountingProxy(coordinator.url, { dropRange: true });
      try {
        const result = await runCli(['verify-receipt', chain.receiptsFile('one'), '--coordinator', noRanges.url]);
        assert.equal(result.code, 1, result.stdout + result.stderr);
        assert.match(
          result.stdout,
          joined(
            'm',
            /^mul #1 \(one\) FAIL \[receipt\.source_unavailable\]: cannot read the final key of mul: the server /,
            /answered a range request with the whole file/,
          ),
        );
      } finally {
        await noRanges.close();
      }
    },
  );
});
