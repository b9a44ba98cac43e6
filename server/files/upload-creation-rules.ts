/**
 * The rules an upload is measured by, pure (no disk, no tus), so each is tested on its own
 * (tests/server/upload-creation-rules.test.ts) and the tus wiring (contribution-uploads.ts) only
 * gathers the figures they need:
 *  - what a creation declares: its format (`format` metadata: the whole key, or a contribution
 *    delta of a version the coordinator takes), the head a delta was made on (`head`), its length;
 *  - whether a creation fits a next link of the chain: made on the current head, its length
 *    declared, at least the head (or its skeleton) plus an empty record, at most plus 64 KiB;
 *  - how much free disk the coordinator must keep before it takes a new upload: the largest one
 *    possible, the margin, and what the uploads and delta intakes already under way will still
 *    write (each intake grows a temporary file to a whole key).
 */
import { CoordinatorError } from '../../core/errors.ts';
import { DELTA_FORMATS, isDeltaFormat, type DeltaFormat } from '../../core/delta/delta-format.ts';
import { MIN_CONTRIBUTION_RECORD_BYTES } from '../../core/zkey/zkey-file.ts';

/** Room for the one new MPC record (≈ 450 bytes plus a name of up to 64) over the head's size. */
export const NEXT_LINK_SLACK_BYTES = 64 * 1024;

/** The upload formats taken (tus metadata `format`); absent means the whole key. */
const UPLOAD_FORMATS = ['zkey', ...DELTA_FORMATS] as const;
export type UploadFormat = (typeof UPLOAD_FORMATS)[number];

export interface DeclaredUpload {
  format: UploadFormat;
  /** The head a delta was made on. */
  head?: number;
  /** Upload-Length, when declared. */
  length?: number;
}

/** A creation's Upload-Metadata (`key base64,key base64`), decoded. */
function uploadMetadata(header: string | null): Map<string, string> {
  const metadata = new Map<string, string>();
  for (const pair of (header ?? '').split(',')) {
    const [key, value] = pair.trim().split(' ');
    if (key) metadata.set(key, Buffer.from(value ?? '', 'base64').toString('utf8'));
  }
  return metadata;
}

/**
 * What a creation declares (Upload-Metadata, Upload-Length). Throws `request.invalid` for an unknown
 * format, or a delta that does not say which head it was made on.
 */
export function declaredUpload(metadataHeader: string | null, lengthHeader: string | null): DeclaredUpload {
  const metadata = uploadMetadata(metadataHeader);
  const format = metadata.get('format') ?? 'zkey';
  const length = lengthHeader === null || !/^\d{1,15}$/.test(lengthHeader) ? undefined : Number(lengthHeader);
  const withLength = length === undefined ? {} : { length };
  if (format === 'zkey') return { format, ...withLength };
  if (!isDeltaFormat(format)) {
    throw new CoordinatorError(
      'request.invalid',
      `unknown upload format "${format.slice(0, 40)}"; this coordinator takes ${UPLOAD_FORMATS.join(', ')}`,
    );
  }
  const head = metadata.get('head') ?? '';
  if (!/^\d{1,6}$/.test(head)) {
    throw new CoordinatorError(
      'request.invalid',
      `a ${format} upload declares the index of the head it was made on (metadata "head", X-Chain-Head ` +
        'of the inputs downloaded)',
    );
  }
  return { format, head: Number(head), ...withLength };
}

/** The chain's head, as a creation is measured against it. */
export interface HeadSizes {
  circuit: string;
  index: number;
  /** The head key's size in bytes. */
  keyBytes: number;
  /** Its skeleton's (what a delta is measured against). */
  skeletonBytes: number;
}

/**
 * Refuses a creation that cannot be a next link of the chain (throws): a delta made on another
 * head (`delta.stale_head`), an undeclared length (`upload.length_required`), a length under the
 * head (or its skeleton) plus an empty record (`upload.too_small`) or over it plus 64 KiB
 * (`upload.too_large`).
 */
export function checkCreation(declared: DeclaredUpload, head: HeadSizes): void {
  if (declared.head !== undefined && declared.head !== head.index) {
    throw new CoordinatorError(
      'delta.stale_head',
      `this delta was made on contribution ${declared.head}, but the head of ${head.circuit} is now contribution ` +
        `${head.index}; download the head's inputs again and contribute on them`,
    );
  }
  if (declared.length === undefined) {
    throw new CoordinatorError(
      'upload.length_required',
      'declare the size of the contribution when creating the upload (Upload-Length)',
    );
  }
  const delta = isDeltaFormat(declared.format);
  const base = delta ? head.skeletonBytes : head.keyBytes;
  const what = delta ? "the head's skeleton" : 'the head';
  const minimum = base + MIN_CONTRIBUTION_RECORD_BYTES;
  if (declared.length < minimum) {
    throw new CoordinatorError(
      'upload.too_small',
      `a contribution to ${head.circuit} is at least ${minimum} bytes (${what} ` +
        `plus one contribution record); this upload declares ${declared.length}`,
    );
  }
  const maximum = base + NEXT_LINK_SLACK_BYTES;
  if (declared.length > maximum) {
    throw new CoordinatorError(
      'upload.too_large',
      `a contribution${delta ? ' delta' : ''} to ${head.circuit} is at most ${maximum} bytes ` +
        `(${what} plus one contribution record); this upload declares ${declared.length}`,
    );
  }
}

/** The longest upload a circuit whose head key is `keyBytes` can take (a whole key; a delta is less). */
export function largestUploadBytes(keyBytes: number): number {
  return keyBytes + NEXT_LINK_SLACK_BYTES;
}

/** Bytes the work under way will still write: an upload still arriving, or an intake's temporary key. */
export interface InFlightWrite {
  /** What the file will hold once done (an upload's declared length, an intake's whole key). */
  finalBytes: number;
  /** What it holds on disk now. */
  writtenBytes: number;
}

/**
 * The free space a new upload needs: the largest upload possible, the configured margin, and
 * whatever the uploads and intakes already under way (on any circuit) will still write.
 */
export function requiredFreeBytes(largestUpload: number, marginBytes: number, inFlight: InFlightWrite[]): number {
  const pending = inFlight.reduce((sum, write) => sum + Math.max(0, write.finalBytes - write.writtenBytes), 0);
  return largestUpload + marginBytes + pending;
}

/** The refusal of a PATCH (or DELETE) to an upload whose last byte arrived: it is being finished, or was. */
export function completeRefusal(): CoordinatorError {
  return new CoordinatorError(
    'upload.complete',
    'this upload has all its bytes and is being handed in (or was); wait for its verdict, or start a new upload',
  );
}

/** A creation while the disk is short of the space it needs (upload-disk-space.ts). */
export function diskFullRefusal(): CoordinatorError {
  return new CoordinatorError(
    'upload.disk_full',
    'the coordinator is short of disk space and takes no uploads for now; please try again later',
  );
}

/** A creation while the circuit's earlier upload is being handed in: it is never replaced. */
export function submittingRefusal(): CoordinatorError {
  return new CoordinatorError(
    'upload.submitting',
    'your previous upload for this circuit is being handed in; wait for its verdict',
  );
}

/** A delta's own format, when `format` names one. */
export function deltaFormatOf(format: string | null | undefined): DeltaFormat | undefined {
  return isDeltaFormat(format) ? format : undefined;
}
