/**
 * What a hostile turn holder's uploads cost the coordinator, against an honest upload's, in one run
 * on the real `ceremony serve` (compiled dist/, embedded verifier, its own process group) at the
 * bench key (rs18 by default: the real-shaped 2^18 key). For each upload, from its creation to its
 * refusal or verdict (and half a second either side, for work in flight to end): the CPU of the
 * coordinator's process group (user + system of every thread, its verifier included, from /proc),
 * and the peak resident memory each of its two processes reached above what it held before (the
 * HTTP process and the verifier; each process's peak is reset through /proc/PID/clear_refs first).
 *
 * After a warm-up turn (the chain's z1 as a whole key, so the head is one this coordinator
 * verified), in order:
 *  1. every malformed whole key of bench/hostile-upload-shapes.ts, made from the chain's z2 (a
 *     contribution on z1): header, table, lengths, record, points; then the honest whole key z2,
 *     the whole keys' yardstick (the first record check of a process builds its curve: one
 *     unmeasured garbage record goes first);
 *  2. every malformed delta of the same module, made from a valid delta on z2 (the kernel's
 *     contribution on the head's inputs, sent in 2 MiB PATCHes as the clients send it), and the
 *     head's own L and H with a garbage record; then that valid delta, the deltas' yardstick, and
 *     its coordinator share (last byte → accepted) (the first sums of a process start its MSM
 *     threads: one unmeasured delta with a point off the curve goes first);
 *  3. a valid delta with a point off the curve in H's last chunk (one MSM, not two);
 *  4. the race: a valid delta, and as soon as the coordinator logs its last byte, twenty empty
 *     PATCHes and a chunked one-byte PATCH at its end offset while it is being finished; its cost
 *     above the honest delta's is the burst's, and no temporary key may be left.
 * Goals: each malformed upload ≤ 0.1 × the honest upload of its kind, in CPU and in memory, but
 * for a point that only a pass over the points can find (≤ 1 ×: the verifier's own work, or the
 * intake's sums); the burst ≤ 0.1 × the honest delta, no temporary key; the coordinator's share
 * of the honest delta ≤ 0.5 s.
 *
 * Each malformed shape is sent `--runs` times (default 1), its figures the medians; the honest
 * uploads once each (each accepted one moves the head).
 *
 * Usage: tsx bench/hostile-uploads.ts [--circuit rs18 | --power P] [--runs N] [--json FILE]
 */
import { writeFileSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DELTA_FORMAT, DELTA_FORMAT_V1 } from '../core/delta/delta-format.ts';
import { isTempPath } from '../core/fs/atomic-write.ts';
import { contributeFast } from '../core/kernel/contribute-fast.ts';
import { closeMultiExp } from '../core/kernel/multi-exp.ts';
import { releaseBn128 } from '../core/crypto/bn128.ts';
import { readZkeyInfo, SECTION } from '../core/zkey/zkey-file.ts';
import { chunkSizeFor } from '../web/src/contribute/upload-chunks.ts';
import { ContributorClient } from '../tests/helpers/contributor-client.ts';
import { editSections, G1, inDeltaV2Order, sectionOf } from '../tests/helpers/zkey-tamper.ts';
import { BENCH_CIRCUIT, compiledBenchCeremony } from './bench-ceremony.ts';
import { benchLog as log, type BenchChain } from './bench-chain.ts';
import { killGroupAtExit, startCeremonyServe, type CoordinatorProcess } from './coordinator-process.ts';
import { processTree, procStatusBytes, treeCpuSeconds } from './process-tree-sampler.ts';
import { parseBenchArgs } from './bench-args.ts';
import { deltaShapes, wholeKeyShapes, type UploadShape } from './hostile-upload-shapes.ts';

/** What the streaming clients send per PATCH (core/delta/streamed-delta.ts UPLOAD_CHUNK_BYTES). */
const DELTA_PIECE_BYTES = 2 << 20;
const GOALS = { malformed: 0.1, aPointRead: 1, burst: 0.1, coordinatorShareSeconds: 0.5 };
/**
 * Presence and silence off: what the bench measures is the uploads' cost, not the queue's. A
 * refusal ends a turn: the same contributor takes the next, so neither missed turns nor the upload
 * limits may stop it.
 */
const SERVE_ENV = {
  PRESENCE_MS: '0',
  TAKE_TURN_MS: '0',
  TURN_SILENCE_MS: '0',
  MAX_MISSED_TURNS: '1000',
  RATE_LIMIT_UPLOAD_CREATION: '100000',
  RATE_LIMIT_UPLOAD_REQUESTS: '1000000',
};

interface Figure {
  kind: 'whole key' | 'delta';
  what: string;
  /** What the shape is (header, table, lengths, record, points), or honest, or another row of the bench. */
  family: string;
  outcome: string;
  cpuSeconds: number;
  wallSeconds: number;
  /** Peak resident memory above what each process held when the upload began. */
  httpPeakBytes: number;
  verifierPeakBytes: number;
}

interface Measured<T> {
  result: T;
  cpuSeconds: number;
  wallSeconds: number;
  httpPeakBytes: number;
  verifierPeakBytes: number;
}

/** Lets work in flight (a verifier's last answer, a sweep) end before a reading. */
const settle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 500));

/** Each process of the group's resident memory now, its peak (VmHWM) reset to it (Linux: clear_refs 5). */
function resetPeaks(groupId: number): Map<number, number> {
  const now = new Map<number, number>();
  for (const { pid } of processTree(groupId)) {
    const rss = procStatusBytes(pid, 'VmRSS');
    if (rss === undefined) continue;
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    now.set(pid, rss);
  }
  return now;
}

/** The peak above `before` of the HTTP process (the group's leader) and of the others (the verifier). */
function peaksSince(before: Map<number, number>, leader: number): { http: number; verifier: number } {
  const peaks = { http: 0, verifier: 0 };
  for (const [pid, rss] of before) {
    const grown = Math.max(0, (procStatusBytes(pid, 'VmHWM') ?? rss) - rss);
    if (pid === leader) peaks.http = grown;
    else peaks.verifier = Math.max(peaks.verifier, grown);
  }
  return peaks;
}

/** The coordinator group's CPU, wall time and peak memory taken by `work`, after the group settled. */
async function measured<T>(coordinator: CoordinatorProcess, work: () => Promise<T>): Promise<Measured<T>> {
  await settle();
  const cpu = treeCpuSeconds(coordinator.groupId);
  const rss = resetPeaks(coordinator.groupId);
  const started = Date.now();
  const result = await work();
  await settle();
  const peaks = peaksSince(rss, coordinator.pid);
  return {
    result,
    cpuSeconds: treeCpuSeconds(coordinator.groupId) - cpu,
    wallSeconds: (Date.now() - started) / 1000,
    httpPeakBytes: peaks.http,
    verifierPeakBytes: peaks.verifier,
  };
}

async function contributorOnTurn(coordinator: CoordinatorProcess, name: string): Promise<ContributorClient> {
  const client = new ContributorClient(coordinator.url);
  await client.signInDemo(name);
  await client.join();
  await onTurn(client, name);
  return client;
}

const onTurn = (client: ContributorClient, name: string): Promise<unknown> =>
  client.waitFor((me) => me.status.circuits[0]?.state === 'turn', `${name}'s turn`, 600_000);

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

/**
 * Sends `bytes` in PATCHes of `pieceBytes` until one is refused or the last is answered; that
 * answer (a creation refused: `atCreation`; the connection closed by a refusal before its answer
 * was read: `closed`). `onLastSent` runs once the last PATCH is on its way.
 */
async function sendAsClients(
  client: ContributorClient,
  bytes: Buffer,
  metadata: Record<string, string>,
  pieceBytes: number,
  onLastSent?: (url: string, sentAt: number) => Promise<void>,
): Promise<{ status: number; code?: string; atCreation?: boolean; closed?: boolean; contributionId?: string }> {
  const created = await client.createUpload(BENCH_CIRCUIT, { length: bytes.length, metadata });
  if (created.status !== 201)
    return { status: created.status, code: (await client.refusal(created)).code, atCreation: true };
  const url = client.uploadUrl(created);
  for (let offset = 0; offset < bytes.length; offset += pieceBytes) {
    const end = Math.min(bytes.length, offset + pieceBytes);
    const sentAt = Date.now();
    const sending = client.patch(url, offset, new Uint8Array(bytes.subarray(offset, end)));
    if (end === bytes.length && onLastSent) await onLastSent(url, sentAt);
    // A PATCH refused while its body is still on its way may see the connection closed before the answer.
    const answer = await sending.catch((error: unknown) => {
      if (error instanceof TypeError && error.message === 'fetch failed') return undefined;
      throw error;
    });
    if (!answer) return { status: 0, closed: true };
    if (answer.status !== 204) return { status: answer.status, code: (await client.refusal(answer)).code };
    if (end === bytes.length) return { status: 204, contributionId: answer.headers.get('x-contribution-id') ?? '' };
  }
  return { status: 204 };
}

/**
 * The verdict the coordinator logs for the contribution `id`, or for the first one decided since
 * `since` (an upload refused at a PATCH answers no id): `accepted`, or `refused CODE`. Read from its
 * log, not asked over HTTP, so that waiting costs the coordinator nothing.
 */
async function verdictFromLog(serve: CoordinatorProcess, since: number, id?: string): Promise<string> {
  const deadline = Date.now() + 600_000;
  for (;;) {
    const line = serve.logs.find(
      (l) =>
        (l.message === 'contribution accepted' || l.message === 'contribution refused') &&
        l.time >= since - 5 &&
        (id === undefined || l.contributionId === id),
    );
    if (line) return line.message === 'contribution accepted' ? 'accepted' : `refused ${String(line.code)}`;
    if (Date.now() > deadline) throw new Error('no verdict in the coordinator’s log');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/**
 * Sends one upload on the client's turn, measured from its creation to its verdict (or to the
 * refusal of a request that leaves none: a creation refused); the outcome names both.
 */
async function measuredUpload(
  serve: CoordinatorProcess,
  client: ContributorClient,
  bytes: Buffer,
  metadata: Record<string, string>,
  pieceBytes: number,
): Promise<Measured<string>> {
  return measured(serve, async () => {
    const since = Date.now();
    const answer = await sendAsClients(client, bytes, metadata, pieceBytes);
    if (answer.atCreation) return `${answer.status} ${answer.code} at creation`;
    const verdict = await verdictFromLog(serve, since, answer.contributionId);
    if (answer.closed) return `connection closed at a PATCH; ${verdict}`;
    return answer.status === 204 ? verdict : `${answer.status} ${answer.code} at a PATCH; ${verdict}`;
  });
}

function figureOf(kind: Figure['kind'], what: string, family: string, m: Measured<string>): Figure {
  return {
    kind,
    what,
    family,
    outcome: m.result,
    cpuSeconds: m.cpuSeconds,
    wallSeconds: m.wallSeconds,
    httpPeakBytes: m.httpPeakBytes,
    verifierPeakBytes: m.verifierPeakBytes,
  };
}

/** The malformed shapes of `kind` one after another on the client's turns (each refusal ends one), then `honest`. */
async function shapeRows(
  serve: CoordinatorProcess,
  client: ContributorClient,
  kind: Figure['kind'],
  shapes: UploadShape[],
  send: { metadata: (shape?: UploadShape) => Record<string, string>; pieceBytes: (length: number) => number },
  runsPerShape: number,
): Promise<Figure[]> {
  const figures: Figure[] = [];
  for (const shape of shapes) {
    log(`${kind}: ${shape.name}`);
    const bytes = shape.bytes();
    const runs: Array<Measured<string>> = [];
    for (let run = 0; run < runsPerShape; run++) {
      await onTurn(client, kind);
      runs.push(await measuredUpload(serve, client, bytes, send.metadata(shape), send.pieceBytes(bytes.length)));
    }
    figures.push(figureOf(kind, shape.name, shape.family, medianOf(runs)));
  }
  return figures;
}

/** The medians of the runs of one shape, each figure taken on its own. */
function medianOf(runs: Array<Measured<string>>): Measured<string> {
  const median = (pick: (m: Measured<string>) => number): number =>
    runs.map(pick).sort((a, b) => a - b)[Math.floor(runs.length / 2)]!;
  return {
    result: runs[0]!.result,
    cpuSeconds: median((m) => m.cpuSeconds),
    wallSeconds: median((m) => m.wallSeconds),
    httpPeakBytes: median((m) => m.httpPeakBytes),
    verifierPeakBytes: median((m) => m.verifierPeakBytes),
  };
}

/** 1: the malformed whole keys on head z1, then z2 itself (accepted: the head becomes z2). */
async function wholeKeyRows(serve: CoordinatorProcess, chain: BenchChain, runs: number): Promise<Figure[]> {
  const client = await contributorOnTurn(serve, 'whole');
  const z2 = await readFile(chain.z2);
  const headHistory = (await readZkeyInfo(chain.z1)).sections.get(SECTION.mpc)!.size;
  const shapes = wholeKeyShapes(z2, headHistory);
  const send = { metadata: () => ({}), pieceBytes: chunkSizeFor };
  log('warm-up: a whole key with a garbage record, unmeasured (builds the record check’s curve)');
  const garbage = shapes.find((shape) => shape.family === 'record' && /proof of knowledge/.test(shape.name))!;
  await measuredUpload(serve, client, garbage.bytes(), {}, chunkSizeFor(z2.length));
  const figures = await shapeRows(serve, client, 'whole key', shapes, send, runs);
  await onTurn(client, 'whole');
  log('whole key: the honest z2');
  const honest = await measuredUpload(serve, client, z2, {}, chunkSizeFor(z2.length));
  return [...figures, figureOf('whole key', 'honest whole key (z2)', 'honest', honest)];
}

/** 2: the malformed deltas on the head, a garbage record, then the valid delta (accepted), and its share. */
async function deltaRows(
  serve: CoordinatorProcess,
  scratch: string,
  runs: number,
): Promise<{ figures: Figure[]; share: number }> {
  const { inputs, head } = await headInputs(serve);
  log('making a valid delta on the head (the kernel, outside the measurements)');
  const delta = await validDelta(scratch, inputs, 'delta');
  const client = await contributorOnTurn(serve, 'delta');
  const headSection = (id: number): Buffer => {
    let data = Buffer.alloc(0);
    editSections(inputs, (f) => (data = Buffer.from(sectionOf(f, id).data)));
    return data;
  };
  const garbage: UploadShape = {
    family: 'record',
    name: 'the head’s own L and H with a garbage record',
    bytes: () =>
      editSections(delta, (f) => {
        sectionOf(f, SECTION.l).data = headSection(SECTION.l);
        sectionOf(f, SECTION.h).data = headSection(SECTION.h);
        // The new record's transcript digest (after its δ, g1_s, g1_sx and g2_spx): its proof fails.
        sectionOf(f, SECTION.mpc).data[headSection(SECTION.mpc).length + 5 * G1 + 3]! ^= 0xff;
      }),
  };
  const metadata = (shape?: UploadShape) => ({
    format: shape?.v1 ? DELTA_FORMAT_V1 : DELTA_FORMAT,
    head: String(head),
  });
  const shapes = [...deltaShapes(delta, headSection(SECTION.mpc).length), garbage];
  // The first sums of a process start its MSM threads (once): a point refused, unmeasured, first.
  log('warm-up: a delta with its first point off the curve, unmeasured (starts the intake’s sums)');
  const pointShape = shapes.find((shape) => shape.family === 'points' && /first point of L off/.test(shape.name))!;
  await measuredUpload(serve, client, pointShape.bytes(), metadata(), DELTA_PIECE_BYTES);
  const send = { metadata, pieceBytes: () => DELTA_PIECE_BYTES };
  const figures = await shapeRows(serve, client, 'delta', shapes, send, runs);
  await onTurn(client, 'delta');
  log('delta: the honest delta, creation → verdict');
  const honest = await measuredUpload(serve, client, delta, metadata(), DELTA_PIECE_BYTES);
  const complete = serve.logs.filter((l) => l.message === 'contribution upload complete').at(-1)!;
  const accepted = serve.logs.filter((l) => l.message === 'contribution accepted').at(-1);
  const share = accepted ? (accepted.time - complete.time) / 1000 : Number.NaN;
  return { figures: [...figures, figureOf('delta', 'honest delta (intake and check)', 'honest', honest)], share };
}

async function temporaryKeys(dataDir: string): Promise<string[]> {
  return (await readdir(path.join(dataDir, 'uploads', BENCH_CIRCUIT)).catch(() => [])).filter(isTempPath);
}

/** 3 and 4: a point off the curve in H's last chunk, then the race of PATCHes at a finishing delta's end. */
async function laterRows(serve: CoordinatorProcess, scratch: string, dataDir: string): Promise<Figure[]> {
  const next = await headInputs(serve);
  const thirdDelta = await validDelta(scratch, next.inputs, 'third');
  const third = await contributorOnTurn(serve, 'third');
  const metadata = { format: DELTA_FORMAT, head: String(next.head) };
  const badLast = editSections(thirdDelta, (f) => {
    const h = sectionOf(f, SECTION.h);
    h.data[h.data.length - G1 / 2] = h.data[h.data.length - G1 / 2]! ^ 1;
  });
  log('3. a point off the curve in the last chunk of H');
  const bad = await measuredUpload(serve, third, badLast, metadata, DELTA_PIECE_BYTES);
  await onTurn(third, 'third');
  log('4. PATCHes at the end offset while the honest delta is finished');
  const burstAnswers: string[] = [];
  const raced = await measured(serve, async () => {
    const since = Date.now();
    const answer = await sendAsClients(third, thirdDelta, metadata, DELTA_PIECE_BYTES, async (url, sentAt) => {
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
    return answer.status === 204
      ? verdictFromLog(serve, since, answer.contributionId)
      : `${answer.status} ${answer.code}`;
  });
  const answersSeen = [...new Set(burstAnswers)].join(', ');
  const left = (await temporaryKeys(dataDir)).length;
  return [
    figureOf('delta', 'a point off the curve in H’s last chunk', 'points', bad),
    figureOf('delta', 'honest delta + 21 PATCHes at its end', 'race', {
      ...raced,
      result: `${raced.result}; the PATCHes: ${answersSeen}; temporary keys left: ${left}`,
    }),
  ];
}

const mib = (bytes: number): string => (bytes / 2 ** 20).toFixed(1);

/** The table: each row against the honest upload of its kind, in CPU and in peak memory (both processes). */
function report(target: string | number, figures: Figure[], share: number, runs: number): string {
  const honest = (kind: Figure['kind']): Figure => figures.find((f) => f.kind === kind && f.family === 'honest')!;
  const memory = (f: Figure): number => f.httpPeakBytes + f.verifierPeakBytes;
  const rows = figures.map((f) => {
    const yardstick = honest(f.kind);
    const cpu = f.cpuSeconds / yardstick.cpuSeconds;
    const mem = memory(f) / Math.max(memory(yardstick), 1);
    const judged = f.family !== 'honest' && f.family !== 'race';
    const goal = judged && (cpu > GOALS.malformed || mem > GOALS.malformed) ? ' !' : '';
    return (
      `| ${f.kind} | ${f.family} | ${f.what} | ${f.outcome} | ${f.cpuSeconds.toFixed(2)} | ` +
      `${cpu.toFixed(3)}${goal} | ${mib(f.httpPeakBytes)} | ${mib(f.verifierPeakBytes)} | ${mem.toFixed(3)} | ` +
      `${f.wallSeconds.toFixed(1)} |`
    );
  });
  const delta = honest('delta');
  const raced = figures.find((f) => f.family === 'race')!;
  const burst = raced.cpuSeconds - delta.cpuSeconds;
  const badLast = figures.find((f) => f.what === 'a point off the curve in H’s last chunk')!;
  return [
    '',
    `hostile uploads at ${typeof target === 'string' ? target : `2^${target}`} (coordinator CPU: its process group;` +
      ` peak memory above the start of each upload: HTTP process, verifier; malformed rows: medians of ${runs}):`,
    '| kind | family | upload | outcome | CPU s | × honest | HTTP peak MiB | verifier peak MiB | memory × honest |' +
      ' wall s |',
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
    ...rows,
    '',
    `each malformed upload ≤ ${GOALS.malformed} × the honest one of its kind, CPU and memory (! marks a row over;` +
      ` a point only a pass over the points finds: ≤ ${GOALS.aPointRead})`,
    `the burst (race − honest delta): ${burst.toFixed(2)} s, ÷ honest ${(burst / delta.cpuSeconds).toFixed(3)} ` +
      `(goal ≤ ${GOALS.burst})`,
    `bad last point ÷ honest delta: ${(badLast.cpuSeconds / delta.cpuSeconds).toFixed(3)} (goal ≤ ${GOALS.aPointRead})`,
    `honest delta's coordinator share (last byte → accepted): ${share.toFixed(2)} s ` +
      `(goal ≤ ${GOALS.coordinatorShareSeconds} s)`,
    '',
  ].join('\n');
}

export async function runHostileUploadsBench(target: string | number, runs = 1): Promise<Figure[]> {
  const { chain, dataDir } = await compiledBenchCeremony(target, 'bench-hostile');
  const scratch = await mkdtemp(path.join(tmpdir(), 'bench-hostile-scratch-'));
  let coordinator: CoordinatorProcess | undefined;
  const stopKillingAtExit = killGroupAtExit(() => coordinator);
  try {
    log('starting ceremony serve (compiled, embedded verifier)');
    coordinator = await startCeremonyServe(dataDir, SERVE_ENV);
    const serve = coordinator;
    await serve.waitForLog('embedded verifier ready', undefined, 120_000);
    log("warm-up: a contributor's turn with the chain's z1");
    const warmUp = await contributorOnTurn(serve, 'warm-up');
    await warmUp.upload(BENCH_CIRCUIT, chain.z1);
    await warmUp.waitFor((me) => me.status.circuits[0]?.state === 'accepted', 'the warm-up verdict', 600_000);
    const whole = await wholeKeyRows(serve, chain, runs);
    const deltas = await deltaRows(serve, scratch, runs);
    const later = await laterRows(serve, scratch, dataDir);
    const figures = [...whole, ...deltas.figures, ...later];
    process.stdout.write(report(target, figures, deltas.share, runs));
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
    options: {
      circuit: { type: 'string', default: 'rs18' },
      power: { type: 'string' },
      runs: { type: 'string', default: '1' },
      json: { type: 'string' },
    },
  });
  const figures = await runHostileUploadsBench(
    values.power ? Number(values.power) : values.circuit,
    Number(values.runs),
  );
  if (values.json) await writeFile(values.json, JSON.stringify(figures, null, 2));
}
