/**
 * The beacon committed to before it is known, on a real chain (anvil, blocks mined on demand):
 * `announceBeacon` names a future block and closes contributions; finalise takes that block's hash
 * once it has its confirmations; the audit compares every final key's beacon with the block over
 * RPC, and fails one that is not it; the same through the command line. (The transcript's order
 * rules: tests/core/transcript.test.ts; the console's routes: tests/server/beacon-announcement.test.ts.)
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import {
  auditorConfigOf,
  copyCeremony,
  newCeremonyDir,
  devPtauHash,
  projectCircuit,
  TEST_BEACON,
} from '../fixtures/ceremony-fixture.ts';
import { freePort, startAnvil, type AnvilNode } from '../helpers/anvil.ts';
import { contributeLocally } from '../../core/ceremony/extend-chain.ts';
import { openCeremony } from '../../core/ceremony/open-ceremony.ts';
import { announceBeacon } from '../../core/finalise/beacon-announcement.ts';
import { finaliseCeremony } from '../../core/finalise/finalise-ceremony.ts';
import { auditCeremony, type AuditReport } from '../../core/audit/audit-ceremony.ts';
import { beaconFinding } from '../../core/audit/check-beacon-announcement.ts';
import { releaseBn128 } from '../../core/crypto/bn128.ts';
import { isCoordinatorError, type ErrorCode } from '../../core/errors.ts';
import { runCli } from '../helpers/run-cli.ts';
import { processAuditMemos } from '../helpers/audit-memos.ts';

const REGISTER_ONLY = { circuits: [projectCircuit('register')] };
const ANVIL_CHAIN_ID = 31337;

const dirs: string[] = [];
let anvil: AnvilNode;
let otherChain: AnvilNode;

before(async () => {
  [anvil, otherChain] = await Promise.all([startAnvil(), startAnvil(['--chain-id', '5'])]);
});

after(async () => {
  await Promise.all([anvil?.stop(), otherChain?.stop()]);
  await releaseBn128();
  await Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true })));
});

const blockHash = async (node: AnvilNode, n: number): Promise<string> =>
  (await node.rpc<{ hash: string }>('eth_getBlockByNumber', [`0x${n.toString(16)}`, false])).hash.slice(2);

let contributed: Promise<string> | undefined;

/**
 * An initialised one-circuit ceremony with one contribution, a copy for each test (an announcement
 * closes its contributions): made once, as every test would make it.
 */
async function contributedCeremony(): Promise<string> {
  contributed ??= newCeremonyDir({ configOverrides: REGISTER_ONLY, init: true }).then(async (dir) => {
    dirs.push(dir);
    await contributeLocally(dir, 'register', 'alice');
    return dir;
  });
  const dir = await copyCeremony(await contributed);
  dirs.push(dir);
  return dir;
}

function refusedWith(code: ErrorCode, pattern: RegExp): (error: unknown) => boolean {
  return (error: unknown) => {
    assert.ok(isCoordinatorError(error, code), String(error));
    assert.match(error.message, pattern);
    return true;
  };
}

const beaconOf = (report: AuditReport) => report.findings.find((finding) => finding.subject === 'beacon')!;

test('an announced future block closes contributions, is the beacon once confirmed, audited', async () => {
  const dir = await contributedCeremony();
  const start = await anvil.latestBlock();
  const blockNumber = start + 10;
  const request = { chainId: ANVIL_CHAIN_ID, blockNumber, iterationsExp: 10 };

  await assert.rejects(
    announceBeacon(dir, { ...request, blockNumber: start + 2 }, { rpcUrl: anvil.rpcUrl }),
    refusedWith('beacon.block_too_soon', /only 2 blocks ahead .*at least 5 ahead/),
  );
  await assert.rejects(
    announceBeacon(dir, request, { rpcUrl: otherChain.rpcUrl }),
    refusedWith('beacon.wrong_chain', /reports chain 5, not chain 31337/),
  );
  const deadEndpoint = `http://127.0.0.1:${await freePort()}/key-in-the-path`;
  await assert.rejects(announceBeacon(dir, request, { rpcUrl: deadEndpoint }), (error: unknown) => {
    assert.ok(isCoordinatorError(error, 'beacon.rpc_unavailable'), String(error));
    assert.equal(error.message, 'the RPC endpoint gave no answer to eth_chainId: connection refused');
    // The coordinator's URL may carry an API key, and this message can leave the server.
    assert.ok(!error.message.includes('key-in-the-path') && !error.message.includes('127.0.0.1'), error.message);
    return true;
  });
  assert.equal((await openCeremony(dir)).beaconAnnouncement, undefined, 'a refused announcement writes nothing');

  const { entry, latestBlock: seen } = await announceBeacon(dir, request, { rpcUrl: anvil.rpcUrl });
  assert.equal(seen, start);
  assert.equal(entry.type, 'beaconAnnouncement');
  await assert.rejects(
    announceBeacon(dir, { ...request, blockNumber: blockNumber + 5 }, { rpcUrl: anvil.rpcUrl }),
    refusedWith('ceremony.beacon_announced', /already announced: block \d+ of chain 31337/),
  );
  await assert.rejects(
    contributeLocally(dir, 'register', 'mallory'),
    refusedWith('ceremony.beacon_announced', /contributions are closed/),
  );

  const fromChain = { rpcUrl: anvil.rpcUrl, confirmations: 3 };
  await assert.rejects(finaliseCeremony(dir, fromChain), refusedWith('beacon.block_not_final', /is not mined yet/));
  await assert.rejects(
    finaliseCeremony(dir, { ...fromChain, rpcUrl: deadEndpoint }),
    refusedWith('beacon.rpc_unavailable', /^the RPC endpoint gave no answer to eth_chainId: connection refused$/),
  );
  await anvil.mine(11);
  await assert.rejects(
    finaliseCeremony(dir, fromChain),
    refusedWith('beacon.block_not_final', /has 1 block on top of it; .*once 3 are/),
  );
  await assert.rejects(
    finaliseCeremony(dir, { ...fromChain, confirmations: 0, iterations: 11 }),
    refusedWith('finalise.beacon_mismatch', /announced beacon is hashed 2\^10 times, not 2\^11/),
  );
  await anvil.mine(2);
  await finaliseCeremony(dir, fromChain);
  const hash = await blockHash(anvil, blockNumber);
  const state = await openCeremony(dir);
  assert.equal(state.chains.get('register')!.beacon!.beacon, hash, "the final key's beacon is the block's hash");

  const ptauHash = await devPtauHash();
  const auditorConfig = auditorConfigOf(dir);
  // With the file's memos: the ptau and contribution 0 (the same in each test's ceremony) are checked once.
  const memos = processAuditMemos();
  const unchecked = await auditCeremony(dir, undefined, { auditorConfig, noQueueLog: true, ptauHash, ...memos });
  assert.equal(unchecked.ok, true);
  assert.match(beaconOf(unchecked).summary, /NOT CHECKED against the chain: audit with --beacon-rpc/);

  const checked = await auditCeremony(dir, undefined, {
    auditorConfig,
    noQueueLog: true,
    ptauHash,
    beaconRpcUrl: anvil.rpcUrl,
    ...memos,
  });
  assert.equal(checked.ok, true, JSON.stringify(checked.findings));
  assert.equal(beaconOf(checked).ok, true);
  assert.ok(beaconOf(checked).summary.includes(`that block's hash 0x${hash}`), beaconOf(checked).summary);

  const wrongChain = await auditCeremony(dir, undefined, {
    noQueueLog: true,
    auditorConfig,
    ptauHash,
    beaconRpcUrl: otherChain.rpcUrl,
    ...memos,
  });
  assert.equal(wrongChain.ok, false);
  assert.equal(beaconOf(wrongChain).code, 'beacon.wrong_chain');
});

test('a beacon other than the announced block hash: refused by finalise over RPC, failed by the audit', async () => {
  const dir = await contributedCeremony();
  const blockNumber = (await anvil.latestBlock()) + 6;
  await announceBeacon(dir, { chainId: ANVIL_CHAIN_ID, blockNumber, iterationsExp: 10 }, { rpcUrl: anvil.rpcUrl });
  await anvil.mine(7);
  await assert.rejects(
    finaliseCeremony(dir, { rpcUrl: anvil.rpcUrl, confirmations: 0, beacon: TEST_BEACON }),
    refusedWith('finalise.beacon_mismatch', /not the hash of block \d+ of chain 31337/),
  );
  await assert.rejects(
    finaliseCeremony(dir, { beacon: 'abcd' }),
    refusedWith('finalise.bad_beacon', /a block hash \(32 bytes\), not 2 bytes/),
  );
  // Without an endpoint finalise takes the coordinator's value: the audit is where it is caught.
  await finaliseCeremony(dir, { beacon: TEST_BEACON });
  const report = await auditCeremony(dir, undefined, {
    noQueueLog: true,
    auditorConfig: auditorConfigOf(dir),
    ptauHash: await devPtauHash(),
    beaconRpcUrl: anvil.rpcUrl,
    ...processAuditMemos(),
  });
  assert.equal(report.ok, false);
  const finding = beaconOf(report);
  assert.equal(finding.code, 'audit.beacon_not_announced');
  assert.match(
    finding.summary,
    /the final key of register applies another beacon than that block's hash 0x[0-9a-f]{64}/,
  );
  // Every other finding still passes: the keys do apply the beacon the transcript states.
  assert.deepEqual(
    report.findings.filter((f) => !f.ok).map((f) => f.subject),
    ['beacon'],
  );
});

test('an announcement dated after its block was mined fails; an unannounced beacon is said to be so', async () => {
  const n = (await anvil.latestBlock()) + 1;
  await anvil.mine(1);
  const hash = await blockHash(anvil, n);
  const announcement = {
    type: 'beaconAnnouncement' as const,
    chainId: ANVIL_CHAIN_ID,
    blockNumber: n,
    iterationsExp: 10,
    seq: 5,
    time: new Date(Date.now() + 3_600_000).toISOString(),
    prevHash: 'ab'.repeat(64),
    hash: 'cd'.repeat(64),
  };
  const beacon = { type: 'beacon', circuit: 'register', beacon: hash } as never;
  const chains = new Map([['register', { beacon } as never]]);
  const late = await beaconFinding(announcement, chains, anvil.rpcUrl);
  assert.equal(late.ok, false);
  assert.equal(late.code, 'audit.beacon_not_announced');
  assert.match(late.summary, /dates the announcement .* when the block .* was already mined/);

  const onTime = await beaconFinding({ ...announcement, time: new Date(0).toISOString() }, chains, anvil.rpcUrl);
  assert.equal(onTime.ok, true, onTime.summary);

  // The auditor's endpoint down: the finding fails (nothing was compared), in words naming no host.
  const deadEndpoint = `http://127.0.0.1:${await freePort()}/key-in-the-path`;
  const unreachable = await beaconFinding(announcement, chains, deadEndpoint);
  assert.equal(unreachable.ok, false);
  assert.equal(unreachable.code, 'beacon.rpc_unavailable');
  assert.match(unreachable.summary, /; the RPC endpoint gave no answer to eth_chainId: connection refused$/);
  assert.ok(!unreachable.summary.includes('127.0.0.1'), unreachable.summary);

  const unannounced = await beaconFinding(undefined, chains, anvil.rpcUrl);
  assert.equal(unannounced.ok, true);
  assert.match(unannounced.summary, /^NOT committed to in advance: the transcript announces no beacon/);
});

test('the command line: announce-beacon, then finalise --rpc; usage errors exit 2', async () => {
  const dir = await contributedCeremony();
  const blockNumber = (await anvil.latestBlock()) + 7;
  const common = ['--chain-id', String(ANVIL_CHAIN_ID), '--iterations', '10', '--rpc', anvil.rpcUrl, '--data', dir];
  const badBlock = await runCli(['announce-beacon', '--block', 'soon', ...common]);
  assert.equal(badBlock.code, 2, badBlock.stderr);
  assert.match(badBlock.stderr, /--block takes a whole number, got "soon"/);

  const announced = await runCli(['announce-beacon', '--block', String(blockNumber), ...common]);
  assert.equal(announced.code, 0, announced.stderr);
  assert.match(
    announced.stdout,
    new RegExp(`^beacon announced: the hash of block ${blockNumber} of chain 31337 `, 'm'),
  );
  assert.match(announced.stdout, /^transcript entry \d+, hash [0-9a-f]{128}$/m);

  const noBeacon = await runCli(['finalise', '--data', dir]);
  assert.equal(noBeacon.code, 1, noBeacon.stderr);
  assert.match(noBeacon.stderr, /finalise\.bad_beacon.*give an RPC endpoint of that chain/);

  await anvil.mine(9);
  const finalised = await runCli(['finalise', '--rpc', anvil.rpcUrl, '--confirmations', '2', '--data', dir]);
  assert.equal(finalised.code, 0, finalised.stderr);
  const state = await openCeremony(dir);
  assert.equal(state.chains.get('register')!.beacon!.beacon, await blockHash(anvil, blockNumber));
});
