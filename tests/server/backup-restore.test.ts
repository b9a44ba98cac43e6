/**
 * A backup that restores. A coordinator (`ceremony serve`, a process group of its own) runs a
 * ceremony of two circuits; alice contributes to both from a terminal, `ceremony backup` copies the
 * running ceremony, then dave contributes to both. The disk is lost: the coordinator is killed with
 * SIGKILL and its data folder deleted; the backup is copied into a fresh folder (`cp -a`, as
 * docs/operations.md says) and a coordinator starts on it at the same address. What was accepted
 * before the backup stays: alice's links, and her receipts check against the restored coordinator.
 * What came after is lost, and its contributor is told: dave's receipts no longer check
 * (`receipt.not_in_transcript`), and his next run says which contributions are lost, keeps his
 * earlier receipts file, and contributes again. The ceremony then finishes (finalise beside the
 * coordinator, publish) and the audit passes, its queue log included; alice's receipts check
 * against the published final keys.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import {
  auditorConfigOf,
  devPtauHash,
  newCeremonyDir,
  projectCircuit,
  REPO_ROOT,
  TEST_BEACON,
} from '../fixtures/ceremony-fixture.ts';
import { startGroup, stopAllGroups } from '../helpers/process-group.ts';
import { startServeProcess, type ServeProcess } from '../helpers/serve-process.ts';
import { CEREMONY_BIN, runCli } from '../helpers/run-cli.ts';
import { cleanUp } from '../helpers/clean-up.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';

const run = promisify(execFile);
const TWO = { circuits: [projectCircuit('register'), projectCircuit('transact21')] };
const SERVER_ENV = { RATE_LIMIT_SIGN_IN: '1000', RATE_LIMIT_JOIN: '1000' };

let dataDir: string;
let scratch: string;
let serve: ServeProcess | undefined;

before(async () => {
  dataDir = await newCeremonyDir({ configOverrides: TWO, init: true });
  scratch = await mkdtemp(path.join(tmpdir(), 'backup-restore-'));
  serve = await startServeProcess({ dataDir, env: SERVER_ENV });
});

after(async () => {
  await stopAllGroups();
  await serve?.stop();
  await cleanUp(dataDir, scratch);
});

/** `ceremony contribute --coordinator URL --demo NAME --receipts FILE`, run to its end. */
async function contribute(name: string, receipts: string): Promise<{ code: number | null; output: string }> {
  const cli = startGroup(
    process.execPath,
    [CEREMONY_BIN, 'contribute', '--coordinator', serve!.url, '--demo', name, '--receipts', receipts],
    { cwd: REPO_ROOT, env: { ...process.env, TMPDIR: scratch }, label: `ceremony contribute (${name})` },
  );
  const { code } = await cli.exited;
  return { code, output: cli.output() };
}

function hashLines(output: string): Record<string, string> {
  return Object.fromEntries(
    [...output.matchAll(/^(\w+) #(\d+) contribution hash ([0-9a-f]{128})$/gm)].map((m) => [m[1]!, `#${m[2]} ${m[3]}`]),
  );
}

test(
  'killed, its data folder lost, restored from a backup: what was accepted before stays, what came after is said ' +
    'lost and made again, the audit passes',
  { timeout: 900_000 },
  async () => {
    const aliceReceipts = path.join(scratch, 'alice.json');
    const daveReceipts = path.join(scratch, 'dave.json');
    const alice = await contribute('alice', aliceReceipts);
    assert.equal(alice.code, 0, alice.output);

    const backup = path.join(scratch, 'backup-1');
    const made = await runCli(['backup', '--data', dataDir, backup]);
    assert.equal(made.code, 0, made.stderr);
    assert.match(made.stdout, /^SECRET \(mode 0600\): state\/receipt-key\.pem/m);

    const dave = await contribute('dave', daveReceipts);
    assert.equal(dave.code, 0, dave.output);
    assert.deepEqual(
      Object.values(hashLines(dave.output)).map((line) => line.split(' ')[0]),
      ['#2', '#2'],
    );

    // The disk is lost.
    await serve!.kill();
    const { port } = serve!;
    serve = undefined;
    await rm(dataDir, { recursive: true, force: true });
    const restored = path.join(scratch, 'restored');
    await run('cp', ['-a', backup, restored]);
    serve = await startServeProcess({ dataDir: restored, port, env: SERVER_ENV });

    // Accepted before the backup: alice's links, and her receipts.
    const state = await openCeremony(restored);
    for (const [circuit, line] of Object.entries(hashLines(alice.output))) {
      const links = state.chains.get(circuit)!.contributions;
      assert.deepEqual(
        links.map((link) => `#${link.index} ${link.contributionHash}`),
        [line],
        circuit,
      );
    }
    const aliceCheck = await runCli(['verify-receipt', aliceReceipts, '--coordinator', serve.url]);
    assert.equal(aliceCheck.code, 0, aliceCheck.stdout + aliceCheck.stderr);

    // After it: lost, and said so, to a receipt check and to dave's next run.
    const daveCheck = await runCli(['verify-receipt', daveReceipts, '--coordinator', serve.url]);
    assert.equal(daveCheck.code, 1, daveCheck.stdout + daveCheck.stderr);
    assert.match(daveCheck.stdout, /FAIL \[receipt\.not_in_transcript\]/);
    const daveBefore = await readFile(daveReceipts, 'utf8');
    const again = await contribute('dave', daveReceipts);
    assert.equal(again.code, 0, again.output);
    for (const circuit of ['register', 'transact21'])
      assert.match(
        again.output,
        new RegExp(
          `^${circuit} #2: your contribution accepted at \\S+ \\(hash [0-9a-f]{16}…\\) is not in the coordinator's ` +
            'transcript any more: the coordinator went back to an earlier state \\(a backup restored\\), so it is ' +
            `lost; you may contribute to ${circuit} again$`,
          'm',
        ),
      );
    const kept = /^your earlier receipts, which show those acceptances, were kept as (\S+)$/m.exec(again.output)?.[1];
    assert.ok(kept, again.output);
    assert.equal(await readFile(kept, 'utf8'), daveBefore, 'the lost acceptances are kept');
    assert.equal((JSON.parse(daveBefore) as { receipts: unknown[] }).receipts.length, 2);
    const daveNow = await runCli(['verify-receipt', daveReceipts, '--coordinator', serve.url]);
    assert.equal(daveNow.code, 0, daveNow.stdout + daveNow.stderr);

    // The ceremony finishes, and the audit passes.
    const finalised = await runCli(['finalise', '--beacon', TEST_BEACON, '--iterations', '10', '--data', restored]);
    assert.equal(finalised.code, 0, finalised.stderr);
    await serve.stop();
    serve = undefined;
    const published = path.join(scratch, 'published');
    const publish = await runCli(['publish', restored, published]);
    assert.equal(publish.code, 0, publish.stderr);
    assert.ok((await readdir(path.join(published, 'transcript'))).includes('queue-log.jsonl'));
    // A ceremony of two circuits: the auditor's config is the folder's own (the checkout's has nine).
    const auditArgs = ['audit', published, '--config', auditorConfigOf(restored), '--ptau-hash', await devPtauHash()];
    const audit = await runCli([...auditArgs, '--quiet'], {
      timeoutMs: 600_000,
    });
    assert.equal(audit.code, 0, audit.stdout + audit.stderr);
    assert.match(audit.stdout, /^queue log ok: /m);
    const aliceFinal = await runCli(['verify-receipt', aliceReceipts, published]);
    assert.equal(aliceFinal.code, 0, aliceFinal.stdout + aliceFinal.stderr);
  },
);
