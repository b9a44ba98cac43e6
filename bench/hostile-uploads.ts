/**
 * What a hostile turn holder's uploads cost the coordinator, against an honest delta's, in one run
 * on the real `ceremony serve` (compiled dist/, embedded verifier, its own process group) at the
 * bench key (rs18 by default: the real-shaped 2^18 key). The coordinator's CPU is read from
 * /proc (user + system of every thread of its process group, its verifier included) before each
 * upload's creation and after its refusal or verdict. In order, after a warm-up turn (z1, so the
 * head is one this coordinator verified, as in a ceremony) and an unmeasured garbage record (the
 * first record check of a process builds its curve, once):
 *  1. garbage record: a delta with the head's own L and H and a new record whose proof of
 *     knowledge fails, sent as the clients send (2 MiB PATCHes);
 *  2. honest: a valid delta (the kernel's contribution on the head's inputs), creation → verdict:
 *     one intake and check, the yardstick; its coordinator's share (last byte → accepted) too;
 *  3. bad last point: a valid delta with a point off the curve in H's last chunk;
 *  4. the race: a valid delta, and as soon as the coordinator logs its last byte, twenty empty
 *     PATCHes and a chunked one-byte PATCH at its end offset while it is being finished; its cost
 *     above the honest delta's is the burst's, and no temporary key may be left.
 * Goals: 1 ≤ 0.2 × 2; the burst ≤ 0.1 × 2, no temporary key; 3 ≤ 1 × 2 (one MSM, not
 * two); the coordinator's share of 2 ≤ 0.5 s.
 *
 * Usage: tsx bench/hostile-uploads.ts [--circuit rs18 | --power P] [--json FILE]
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DELTA_FORMAT } from '../core/delta/delta-format.ts';
import { isTempPath } from '../core/fs/atomic-write.ts';
import { contributeFast } from '../core/kernel/contribute-fast.ts';
import { closeMultiExp } from '../core/kernel/multi-exp.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { SECTION } from '../core/zkey/zkey-file.ts';
import { ContributorClient } from '../tests/helpers/contributor-client.ts';
import { editSections, G1, inDeltaV2Order, sectionOf } from '../tests/helpers/zkey-tamper.ts';
import { BENCH_CIRCUIT, compiledBenchCeremony } from './bench-ceremony.ts';
import { benchLog as log } from './bench-chain.ts';
import { killGroupAtExit, startCeremonyServe, type CoordinatorProcess } from './coordinator-process.ts';
import { treeCpuSeconds } from './process-tree-sampler.ts';
import { parseBenchArgs } from './bench-args.ts';

/** What the streaming clients send per PATCH (core/delta/streamed-delta.ts UPLOAD_CHUNK_BYTES). */
const PIECE_BYTES = 2 << 20;
const GOALS = { garbageRecord: 0.2, burst: 0.1, badLastPoint: 1, coordinatorShareSeconds: 0.5 };

interface Figure {
  what: string;
  cpuSeconds: number;
  wallSeconds: number;
  outcome: string;
}

/** Seconds of the coordinator group's CPU and of the wall clock taken by `work`, after the group settled. */
async function measured<T>(coordinator: CoordinatorProcess, work: () => Promise<T>): Promise<[T, number, number]> {
  await settle();
  const cpu = treeCpuSeconds(coordinator.groupId);
  const started = Date.now();
  const result = await work();
  await settle();
  return [result, treeCpuSeconds(coordinator.groupId) - cpu, (Date.now() - started) / 1000];
}

/** Lets work in flight (a verifier's last answer, a sweep) end before a reading. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 500));

async function contributorOnTurn(coordinator: CoordinatorProcess, name: string): Promise<ContributorClient> {
  const client = new ContributorClient(coordinator.url);
  await client.signInDemo(name);
  await client.join();
  await client.waitFor((me) => me.status.circuits[0]?.state === 'turn', `${name}'s turn`, 600_000);
  return client;
}

/** The head's inputs (bytes) and index, as a client downloads them. */
async function headInputs(coordinator: CoordinatorProcess): Promise<{ inputs: Buffer; head: number }> {
  const response = await fetch(`${coordinator.url}/api/circuits/${BENCH_CIRCUIT}/contribution-inputs`);
  if (!response.ok) throw new Error(`inputs: ${response.status}`);
  return { inputs: Buffer.from(await response.arrayBuffer()), head: Number(response.headers.get('x-chain-head')) };
}

/** The kernel's contribution on `inputs`, in the order the clients send it (v2). */
async function validDelta(scratch: string, inputs: Buffer, name: string): Promise<Buffer> {
  const [input, output] = [path.join(scratch, `${name}.inputs`), path.join(scratch, `${name}.delta`)];
  await writeFile(input, inputs);
  await contributeFast(input, output, name, `${name}'s entropy`);
  const delta = inDeltaV2Order(await readFile(output));
  await rm(output, { force: true });
  return delta;
}

/** Sends `delta` in 2 MiB PATCHes until one is refused or the last is answered; that answer. */
async function sendAsClients(
  client: ContributorClient,
  delta: Buffer,
  head: number,
  onLastSent?: (url: string, sentAt: number) => Promise<void>,
): Promise<{ status: number; code?: string }> {
  const created = await client.createUpload(BENCH_CIRCUIT, {
    length: delta.length,
    metadata: { format: DELTA_FORMAT, head: String(head) },
  });
  if (created.status !== 201) return { status: created.status, code: (await client.refusal(created)).code };
  const url = client.uploadUrl(created);
  for (let offset = 0; offset < delta.length; offset += PIECE_BYTES) {
    const end = Math.min(delta.length, offset + PIECE_BYTES);
    const sentAt = Date.now();
    const sending = client.patch(url, offset, new Uint8Array(delta.subarray(offset, end)));
    if (end === delta.length && onLastSent) await onLastSent(url, sentAt);
    const answer = await sending;
    if (answer.status !== 204) return { status: answer.status, code: (await client.refusal(answer)).code };
  }
  return { status: 204 };
}

async function verdictOf(client: ContributorClient): Promise<string> {
  const me = await client.waitFor(
    (m) => ['accepted', 'turn', 'waiting'].includes(m.status.circuits[0]?.state ?? '') && m.contributions.length > 0,
    'the verdict',
    600_000,
  );
  const last = me.contributions.at(-1)!;
  return last.status === 'accepted' ? 'accepted' : `${last.status} ${last.code}`;
}

async function temporaryKeys(dataDir: string): Promise<string[]> {
  return (await readdir(path.join(dataDir, 'uploads', BENCH_CIRCUIT)).catch(() => [])).filter(isTempPath);
}

export async function runHostileUploadsBench(target: string | number): Promise<Figure[]> {
  const { chain, dataDir } = await compiledBenchCeremony(target, 'bench-hostile');
  const scratch = await mkdtemp(path.join(tmpdir(), 'bench-hostile-scratch-'));
  let coordinator: CoordinatorProcess | undefined;
  const stopKillingAtExit = killGroupAtExit(() => coordinator);
  try {
    log('starting ceremony serve (compiled, embedded verifier)');
    // Presence off: the bench holds a turn while it makes deltas outside the measurements, which no
    // client would; what it measures is the uploads' cost, not the queue's.
    coordinator = await startCeremonyServe(dataDir, { PRESENCE_MS: '0', TAKE_TURN_MS: '0' });
    const serve = coordinator;
    await serve.waitForLog('embedded verifier ready', undefined, 120_000);
    log("warm-up: a contributor's turn with the chain's z1");
    const warmUp = await contributorOnTurn(serve, 'warm-up');
    await warmUp.upload(BENCH_CIRCUIT, chain.z1);
    await warmUp.waitFor((me) => me.status.circuits[0]?.state === 'accepted', 'the warm-up verdict', 600_000);

    const figures: Figure[] = [];
    // 1 and 2 on the same head, by one contributor (a refusal before hand-in keeps the turn).
    const first = await contributorOnTurn(serve, 'first');
    const { inputs, head } = await headInputs(serve);
    log('making a valid delta on the head (the kernel, outside the measurements)');
    const delta = await validDelta(scratch, inputs, 'first');
    const headSection = (id: number): Buffer => {
      let data = Buffer.alloc(0);
      editSections(inputs, (f) => (data = Buffer.from(sectionOf(f, id).data)));
      return data;
    };
    const garbage = editSections(delta, (f) => {
      sectionOf(f, SECTION.l).data = headSection(SECTION.l);
      sectionOf(f, SECTION.h).data = headSection(SECTION.h);
      // The new record's transcript digest (after its δ, g1_s, g1_sx and g2_spx): its proof fails.
      sectionOf(f, SECTION.mpc).data[headSection(SECTION.mpc).length + 5 * G1 + 3]! ^= 0xff;
    });
    // The first record a coordinator checks builds its curve (once per process): not in the figures.
    log('warm-up: a garbage record, unmeasured (builds the record check’s curve)');
    await sendAsClients(first, garbage, head);
    log('1. the head’s own L and H with a garbage record');
    const [refused, garbageCpu, garbageWall] = await measured(serve, () => sendAsClients(first, garbage, head));
    figures.push({
      what: 'garbage record (the head’s L and H)',
      cpuSeconds: garbageCpu,
      wallSeconds: garbageWall,
      outcome: `${refused.status} ${refused.code ?? ''}`.trim(),
    });

    log('2. an honest delta: creation → verdict');
    const [honest, honestCpu, honestWall] = await measured(serve, async () => {
      const answer = await sendAsClients(first, delta, head);
      return answer.status === 204 ? verdictOf(first) : `${answer.status} ${answer.code}`;
    });
    figures.push({
      what: 'honest delta (intake and check)',
      cpuSeconds: honestCpu,
      wallSeconds: honestWall,
      outcome: honest,
    });
    const complete = serve.logs.filter((l) => l.message === 'contribution upload complete').at(-1)!;
    const accepted = serve.logs.filter((l) => l.message === 'contribution accepted').at(-1);
    const shareSeconds = accepted ? (accepted.time - complete.time) / 1000 : Number.NaN;

    log('3. a point off the curve in the last chunk of H');
    const third = await contributorOnTurn(serve, 'third');
    const next = await headInputs(serve);
    const thirdDelta = await validDelta(scratch, next.inputs, 'third');
    const badLast = editSections(thirdDelta, (f) => {
      const h = sectionOf(f, SECTION.h);
      h.data[h.data.length - G1 / 2] = h.data[h.data.length - G1 / 2]! ^ 1;
    });
    const [badAnswer, badCpu, badWall] = await measured(serve, () => sendAsClients(third, badLast, next.head));
    figures.push({
      what: 'a point off the curve in H’s last chunk',
      cpuSeconds: badCpu,
      wallSeconds: badWall,
      outcome: `${badAnswer.status} ${badAnswer.code ?? ''}`.trim(),
    });

    log('4. PATCHes at the end offset while the honest delta is finished');
    const burstAnswers: string[] = [];
    const [raced, racedCpu, racedWall] = await measured(serve, async () => {
      const answer = await sendAsClients(third, thirdDelta, next.head, async (url, sentAt) => {
        // Its last byte is in and it is being finished (the log's clock is this machine's).
        const thisUpload = (l: { contributor?: unknown; time: number }): boolean =>
          l.contributor === 'demo:third' && l.time >= sentAt - 5;
        await serve.waitForLog('contribution upload complete', thisUpload, 60_000);
        const oneByte = new ReadableStream<Uint8Array>({
          start: (controller) => {
            controller.enqueue(new Uint8Array([7]));
            controller.close();
          },
        });
        const burst = await Promise.all([
          ...Array.from({ length: 20 }, () => third.patch(url, thirdDelta.length, new Uint8Array(0))),
          third.patch(url, thirdDelta.length, oneByte),
        ]);
        for (const response of burst)
          burstAnswers.push(`${response.status} ${(await third.refusal(response).catch(() => undefined))?.code ?? ''}`);
      });
      return answer.status === 204 ? verdictOf(third) : `${answer.status} ${answer.code}`;
    });
    const answersSeen = [...new Set(burstAnswers)].join(', ');
    const leftKeys = await temporaryKeys(dataDir);
    figures.push({
      what: 'honest delta + 21 PATCHes at its end',
      cpuSeconds: racedCpu,
      wallSeconds: racedWall,
      outcome: `${raced}; the PATCHes: ${answersSeen}; temporary keys left: ${leftKeys.length}`,
    });

    const ratio = (cpu: number): string => (cpu / honestCpu).toFixed(3);
    const burstCpu = racedCpu - honestCpu;
    process.stdout.write(
      [
        '',
        `hostile uploads at ${typeof target === 'string' ? target : `2^${target}`}` +
          ' (coordinator CPU, its process group):',
        '| upload | CPU s | × honest | wall s | outcome |',
        '| --- | --- | --- | --- | --- |',
        ...figures.map((f) => {
          const cpu = `${f.cpuSeconds.toFixed(2)} | ${ratio(f.cpuSeconds)}`;
          return `| ${f.what} | ${cpu} | ${f.wallSeconds.toFixed(1)} | ${f.outcome} |`;
        }),
        '',
        `garbage record ÷ honest: ${ratio(garbageCpu)} (goal ≤ ${GOALS.garbageRecord})`,
        `the burst (race − honest): ${burstCpu.toFixed(2)} s, ÷ honest ${ratio(burstCpu)} (goal ≤ ${GOALS.burst}); ` +
          `temporary keys left ${leftKeys.length} (goal 0)`,
        `bad last point ÷ honest: ${ratio(badCpu)} (goal ≤ ${GOALS.badLastPoint}: one MSM, not two)`,
        `honest coordinator's share (last byte → accepted): ${shareSeconds.toFixed(2)} s ` +
          `(goal ≤ ${GOALS.coordinatorShareSeconds} s)`,
        '',
      ].join('\n'),
    );
    return figures;
  } finally {
    await coordinator?.stop();
    stopKillingAtExit();
    await rm(dataDir, { recursive: true, force: true });
    await rm(scratch, { recursive: true, force: true });
    await closeMultiExp();
    await releaseBn128();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { values } = parseBenchArgs(import.meta.url, {
    options: { circuit: { type: 'string', default: 'rs18' }, power: { type: 'string' }, json: { type: 'string' } },
  });
  const figures = await runHostileUploadsBench(values.power ? Number(values.power) : values.circuit);
  if (values.json) await writeFile(values.json, JSON.stringify(figures, null, 2));
}
