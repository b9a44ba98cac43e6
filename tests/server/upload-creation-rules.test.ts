/**
 * The rules an upload is measured by (server/files/upload-creation-rules.ts), on their own: what a
 * creation declares, whether it fits a next link of the chain, and the free space a new upload
 * needs with work already in flight.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { isCoordinatorError } from '../../core/errors.ts';
import { MIN_CONTRIBUTION_RECORD_BYTES } from '../../core/zkey/zkey-file.ts';
import {
  checkCreation,
  declaredUpload,
  NEXT_LINK_SLACK_BYTES,
  requiredFreeBytes,
  type HeadSizes,
} from '../../server/files/upload-creation-rules.ts';

const metadata = (pairs: Record<string, string>): string =>
  Object.entries(pairs)
    .map(([key, value]) => `${key} ${Buffer.from(value).toString('base64')}`)
    .join(',');

const head: HeadSizes = { circuit: 'register', index: 3, keyBytes: 100_000, skeletonBytes: 10_000 };

function refusalCode(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(isCoordinatorError(error), String(error));
    return error.code;
  }
  return 'none';
}

describe('what a creation declares', () => {
  it('a whole key by default, a delta of either version with its head, and its length', () => {
    assert.deepEqual(declaredUpload(null, '123'), { format: 'zkey', length: 123 });
    assert.deepEqual(declaredUpload(metadata({ format: 'zkey-delta-v2', head: '3' }), '5'), {
      format: 'zkey-delta-v2',
      head: 3,
      length: 5,
    });
    assert.deepEqual(declaredUpload(metadata({ format: 'zkey-delta-v1', head: '0' }), null), {
      format: 'zkey-delta-v1',
      head: 0,
    });
  });

  it('refuses an unknown format, and a delta that does not name its head', () => {
    assert.equal(
      refusalCode(() => declaredUpload(metadata({ format: 'zkey-delta-v9' }), '1')),
      'request.invalid',
    );
    assert.equal(
      refusalCode(() => declaredUpload(metadata({ format: 'zkey-delta-v2' }), '1')),
      'request.invalid',
    );
    assert.equal(
      refusalCode(() => declaredUpload(metadata({ format: 'zkey-delta-v2', head: 'x' }), '1')),
      'request.invalid',
    );
  });
});

describe('whether a creation fits a next link', () => {
  const fits = (format: string, length: number | undefined, at = 3): string =>
    refusalCode(() =>
      checkCreation(
        declaredUpload(
          metadata(format === 'zkey' ? {} : { format, head: String(at) }),
          length === undefined ? null : String(length),
        ),
        head,
      ),
    );

  it('takes a whole key or a delta between the head plus an empty record and the head plus 64 KiB', () => {
    for (const [format, base] of [
      ['zkey', head.keyBytes],
      ['zkey-delta-v2', head.skeletonBytes],
      ['zkey-delta-v1', head.skeletonBytes],
    ] as const) {
      assert.equal(fits(format, base + MIN_CONTRIBUTION_RECORD_BYTES), 'none', `${format} smallest`);
      assert.equal(fits(format, base + NEXT_LINK_SLACK_BYTES), 'none', `${format} largest`);
      assert.equal(fits(format, base + MIN_CONTRIBUTION_RECORD_BYTES - 1), 'upload.too_small', `${format} short`);
      assert.equal(fits(format, base + NEXT_LINK_SLACK_BYTES + 1), 'upload.too_large', `${format} long`);
    }
  });

  it('refuses a delta made on another head, and an undeclared length', () => {
    assert.equal(fits('zkey-delta-v2', head.skeletonBytes + 1000, 2), 'delta.stale_head');
    assert.equal(fits('zkey', undefined), 'upload.length_required');
  });
});

describe('the free space a new upload needs', () => {
  it('is the largest upload and the margin, plus what work in flight will still write', () => {
    assert.equal(requiredFreeBytes(1000, 50, []), 1050);
    const inFlight = [
      { finalBytes: 800, writtenBytes: 300 }, // an upload half in
      { finalBytes: 1000, writtenBytes: 4096 }, // an intake's key, written (never negative)
      { finalBytes: 1000, writtenBytes: 0 }, // an intake's key, still sparse
    ];
    assert.equal(requiredFreeBytes(1000, 50, inFlight), 1050 + 500 + 0 + 1000);
  });
});
