/**
 * The audit's `beacon` finding: was the beacon committed to before anyone could know it? The
 * transcript's order rules (transcript-format.ts) already hold that an announcement comes once,
 * before every beacon entry and after every contribution, with the exponent each beacon entry
 * carries. What only a chain can show is that every final key's beacon is the announced block's
 * hash; with the auditor's `--beacon-rpc`, this reads the block and compares. It also refuses an
 * announcement the transcript itself dates after the block was mined.
 *
 * What no check here proves: that the announcement was public before the block was mined. The
 * transcript's times are the coordinator's word; only a record of that time (the published
 * transcript, a post) shows it, and the finding says so.
 */
import type { BeaconAnnouncementEntry, CircuitChain } from '../ceremony/open-ceremony.ts';
import { readBeaconBlock } from '../finalise/announced-block.ts';
import { isCoordinatorError } from '../errors.ts';
import type { AuditFinding } from './audit-report-parts.ts';

const SUBJECT = 'beacon';

export async function beaconFinding(
  announcement: BeaconAnnouncementEntry | undefined,
  chains: ReadonlyMap<string, CircuitChain>,
  rpcUrl: string | undefined,
): Promise<AuditFinding> {
  const beacons = [...chains.values()].flatMap((chain) => (chain.beacon ? [chain.beacon] : []));
  if (!announcement) {
    return {
      subject: SUBJECT,
      ok: true,
      summary:
        beacons.length === 0
          ? 'no beacon is announced or applied yet'
          : 'NOT committed to in advance: the transcript announces no beacon, so the beacon is the ' +
            "coordinator's word and may have been chosen after the last contribution (that weakens the " +
            'argument that the final keys are unbiased, not that they are secret when one contributor was honest)',
    };
  }
  const block = `block ${announcement.blockNumber} of chain ${announcement.chainId}`;
  const announced =
    `announced in transcript entry ${announcement.seq} as the hash of ${block}, hashed ` +
    `2^${announcement.iterationsExp} times, after every contribution`;
  if (rpcUrl === undefined) {
    return {
      subject: SUBJECT,
      ok: true,
      summary:
        `${announced}; NOT CHECKED against the chain: audit with --beacon-rpc URL (an endpoint of chain ` +
        `${announcement.chainId}) to compare each final key's beacon with the block's hash`,
    };
  }
  if (beacons.length === 0) return { subject: SUBJECT, ok: true, summary: `${announced}; no beacon applied yet` };
  let mined;
  try {
    mined = await readBeaconBlock(rpcUrl, announcement, 0);
  } catch (error) {
    const code = isCoordinatorError(error) ? error.code : undefined;
    const why = error instanceof Error ? error.message : String(error);
    return { subject: SUBJECT, ok: false, summary: `${announced}; ${why}`, ...(code ? { code } : {}) };
  }
  const wrong = beacons.filter((entry) => entry.beacon !== mined.hash).map((entry) => entry.circuit);
  if (wrong.length > 0) {
    return {
      subject: SUBJECT,
      ok: false,
      code: 'audit.beacon_not_announced',
      summary:
        `${announced}; the final key${wrong.length === 1 ? '' : 's'} of ${wrong.join(', ')} appl` +
        `${wrong.length === 1 ? 'ies' : 'y'} another beacon than that block's hash 0x${mined.hash}`,
    };
  }
  // Whole seconds, as a block's timestamp is: a block mined in the announcement's own second is not after it.
  const announcedAt = Math.floor(Date.parse(announcement.time) / 1000);
  if (announcedAt > mined.timestamp) {
    return {
      subject: SUBJECT,
      ok: false,
      code: 'audit.beacon_not_announced',
      summary:
        `${announced}; but the transcript dates the announcement ${announcement.time}, when the block ` +
        `(timestamp ${new Date(mined.timestamp * 1000).toISOString()}) was already mined`,
    };
  }
  return {
    subject: SUBJECT,
    ok: true,
    summary:
      `${announced}; every final key's beacon is that block's hash 0x${mined.hash}, as the RPC endpoint reports it ` +
      '(its word trusted, not checked), and the transcript dates the announcement before the block. That the ' +
      'announcement was public before the block was mined is for a record of that time to show (the published ' +
      "transcript): the transcript's times are the coordinator's word",
  };
}
