/**
 * The check of an upload's new record, made in the coordinator's HTTP process before it sums a
 * point, copies a head section or hashes the upload (docs/contribution-delta.md): for a
 * contribution delta as soon as its header (section 2) and its history (section 10) are in, and
 * for a whole key once its section table is known to be the head's (core/zkey/key-table-check.ts).
 * The history is the head's plus one record (a delta's by checkDeltaHistory first), the record is
 * of a random contribution on this circuit whose δ the header carries (checkNewRecord), its proof
 * of knowledge holds and δ2 matches δ1 (the verifier's own checks, verify-link-from-head.ts). Every
 * refusal carries the code the verifier would give, so an upload refused here is refused for what
 * a full check of the key would have found.
 *
 * A garbage record thus costs the coordinator a few pairings (and once per process the curve's
 * build), never a pass over L and H. The curve is built without worker threads: these checks run
 * in the coordinator's HTTP process, where pairings on one thread are all they need.
 */
import { open } from 'node:fs/promises';
import { buildBn128 } from 'ffjavascript';
import { readExactly } from '../binfile/read-exactly.ts';
import { checkNewRecord } from '../link-check/check-link-structure.ts';
import { checkDelta2, checkProofOfKnowledge } from '../link-check/verify-link-from-head.ts';
import { parseGrothHeader, parseMpc, readZkeyInfo, type ZkeyInfo } from '../zkey/zkey-file.ts';
import { checkKeyTableAgainstHead } from '../zkey/key-table-check.ts';
import { checkDeltaHistory, checkSkeletonAgainstHead } from './skeleton-zkey.ts';
import type { DeltaFormat } from './delta-format.ts';

const HEAD_LABEL = 'the chain head';
const DELTA_LABEL = 'the contribution delta';
const KEY_LABEL = 'the uploaded key';

type Curve = Parameters<typeof checkProofOfKnowledge>[0];

let singleThreadedCurve: Promise<Curve> | undefined;

/** ffjavascript's bn128 without worker threads, built once per process (a few hundred ms). */
function recordCurve(): Promise<Curve> {
  singleThreadedCurve ??= (buildBn128(true) as Promise<unknown> as Promise<Curve>).catch((error: unknown) => {
    singleThreadedCurve = undefined;
    throw error;
  });
  return singleThreadedCurve;
}

/**
 * Refuses the delta whose section 2 is `header` and section 10 is `mpc` unless its record is one
 * valid random contribution on the verified head at `headPath` (see the module comment).
 */
export async function checkDeltaRecord(headPath: string, header: Uint8Array, mpc: Uint8Array): Promise<void> {
  const head = await readZkeyInfo(headPath, HEAD_LABEL);
  checkDeltaHistory(await headHistory(headPath, head), mpc);
  await checkRecordOnHead(head, header, mpc, DELTA_LABEL);
}

/** The record of the key whose sections 2 and 10 are `header` and `mpc` on the head `head`; `label` names it. */
async function checkRecordOnHead(head: ZkeyInfo, header: Uint8Array, mpc: Uint8Array, label: string): Promise<void> {
  const candidate = {
    header: parseGrothHeader(Buffer.from(header.buffer, header.byteOffset, header.byteLength), label),
    mpc: parseMpc(Buffer.from(mpc.buffer, mpc.byteOffset, mpc.byteLength), label),
  };
  const record = checkNewRecord(head, candidate, { kind: 'random' });
  const curve = await recordCurve();
  await checkProofOfKnowledge(curve, head, record);
  await checkDelta2(curve, candidate);
}

/**
 * The whole-delta form: refuses the finished delta at `deltaPath` unless it fits the head in the
 * order of `format` (checkSkeletonAgainstHead) and its record passes checkDeltaRecord. Run before
 * a delta that was not taken in as it arrived is spliced.
 */
export async function checkDeltaUpload(headPath: string, deltaPath: string, format: DeltaFormat): Promise<void> {
  const { header, mpc } = await checkSkeletonAgainstHead(headPath, deltaPath, format);
  await checkDeltaRecord(headPath, header, mpc);
}

/**
 * The whole-key form, run before an uploaded key is hashed or handed to a verifier: refuses the
 * key at `keyPath` unless its section table is the head's (checkKeyTableAgainstHead: bounded by
 * the head, whatever the key declares) and its record passes the checks above, with the codes the
 * verifier would give (its history's included: a stale key is `contribution.stale`).
 */
export async function checkWholeKeyUpload(headPath: string, keyPath: string): Promise<void> {
  const { header, mpc } = await checkKeyTableAgainstHead(headPath, keyPath, KEY_LABEL);
  await checkRecordOnHead(await readZkeyInfo(headPath, HEAD_LABEL), header, mpc, KEY_LABEL);
}

/** The head's section 10 as bytes (what a delta's must extend by one record). */
async function headHistory(headPath: string, head: ZkeyInfo): Promise<Buffer> {
  const section = head.sections.get(10)!;
  const file = await open(headPath, 'r');
  try {
    return await readExactly(file, section.offset, section.size);
  } finally {
    await file.close();
  }
}
