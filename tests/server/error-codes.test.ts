/**
 * The error code table end to end: every code has an HTTP status and plain words in the browser
 * app; the coordinator's error handler answers every code, and every error that is not a
 * CoordinatorError, with a code of the table and that code's status (over HTTP, in-process); the
 * traits that replaced prefix tests (refusal, usage error); codes read back from SQLite are checked,
 * not cast.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import {
  ALL_ERROR_CODES,
  CoordinatorError,
  errorCodeOr,
  isErrorCode,
  isUsageError,
  refusesContribution,
  type ErrorCode,
} from '../../core/errors.ts';
import { ERROR_STATUS, errorStatus } from '../../server/http/error-status.ts';
import { errorHandler, notFoundHandler } from '../../server/http/error-handler.ts';
import { isRefusalCode } from '../../core/verifier-contract/verifier-contract.ts';
import { ContributionStore } from '../../server/contributions/contribution-store.ts';
import { openDatabase } from '../../server/store/database.ts';
import { ERROR_MESSAGES } from '../../web/src/api/error-messages.ts';
import { makeLobby } from './lobby/lobby-helpers.ts';

/** The codes that refuse a contribution for good: the verifier's verdicts, and a link overtaken at commit. */
const REFUSALS = [
  'zkey.malformed',
  'zkey.section_table_mismatch',
  'zkey.not_groth16',
  'delta.malformed',
  'delta.stale_head',
  'contribution.wrong_circuit',
  'contribution.header_mismatch',
  'contribution.stale',
  'contribution.no_new_contribution',
  'contribution.multiple_new_contributions',
  'contribution.history_mismatch',
  'contribution.unexpected_type',
  'contribution.delta_unchanged',
  'contribution.delta_mismatch',
  'contribution.invalid_proof_of_knowledge',
  'contribution.l_section_invalid',
  'contribution.h_section_invalid',
  'contribution.point_not_on_curve',
  'contribution.identity_pattern_changed',
  'contribution.invalid',
  'contribution.not_next',
];
const USAGE_ERRORS = [
  'usage.invalid_arguments',
  'input.file_not_found',
  'input.not_json',
  'input.invalid',
  'receipt.malformed',
  // A --link-dest that is no backup of this ceremony: the operator's argument, exit 2.
  'backup.not_a_backup',
];

describe('the code table', () => {
  test('every code has an HTTP error status and plain words, and the status table has no other code', () => {
    assert.ok(ALL_ERROR_CODES.length > 50, 'the table is read whole');
    for (const code of ALL_ERROR_CODES) {
      const status = errorStatus(code);
      assert.ok(Number.isInteger(status) && status >= 400 && status <= 599, `${code}: status ${status}`);
      const words = ERROR_MESSAGES[code];
      assert.ok(words.what.trim().length > 0 && words.next.trim().length > 0, `${code}: plain words`);
      assert.notEqual(words.what, code, `${code}: the words say more than the code`);
    }
    assert.deepEqual(Object.keys(ERROR_STATUS).sort(), [...ALL_ERROR_CODES].sort());
    assert.deepEqual(Object.keys(ERROR_MESSAGES).sort(), [...ALL_ERROR_CODES].sort());
  });

  test('refusal and usage error are traits of the code, not of its prefix', () => {
    assert.deepEqual(ALL_ERROR_CODES.filter(refusesContribution).sort(), [...REFUSALS].sort());
    assert.deepEqual(ALL_ERROR_CODES.filter(isUsageError).sort(), [...USAGE_ERRORS].sort());
    // A code read back from a queue: only a code of the table that refuses is a refusal.
    assert.equal(isRefusalCode('contribution.delta_mismatch'), true);
    assert.equal(isRefusalCode('verification.unavailable'), false);
    assert.equal(isRefusalCode('contribution.made_up'), false, 'a well-prefixed unknown code is no refusal');
    assert.equal(isRefusalCode('zkey.'), false);
  });

  test('codes from outside are checked, never cast', () => {
    assert.equal(isErrorCode('ceremony.not_closed'), true);
    assert.equal(isErrorCode('toString'), false, 'inherited properties are no codes');
    assert.equal(isErrorCode(42), false);
    assert.equal(errorCodeOr('lobby.not_your_turn', 'internal'), 'lobby.not_your_turn');
    assert.equal(errorCodeOr('contribution.renamed_long_ago', 'internal'), 'internal');
  });
});

describe('the error handler over HTTP', () => {
  let server: Server;
  let base: string;
  const logged: string[] = [];

  before(async () => {
    const app = express();
    app.get('/code/:code', (req) => {
      throw new CoordinatorError(req.params.code as ErrorCode, `refused with ${req.params.code}`);
    });
    app.get('/crash', () => {
      throw new Error('secret detail: /var/lib/ceremony/state');
    });
    app.get('/client-error/:status', (req) => {
      throw Object.assign(new Error(`a ${req.params.status} from a library`), { status: Number(req.params.status) });
    });
    app.post('/small-json', express.json({ limit: '1kb' }), (_req, res) => {
      res.json({ ok: true });
    });
    app.use(notFoundHandler);
    app.use(errorHandler({ warn: (message, fields) => void logged.push(`${message} ${JSON.stringify(fields)}`) }));
    server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function answer(response: Response): Promise<{ status: number; code: string; message: string }> {
    const body = (await response.json()) as { error: { code: string; message: string } };
    assert.ok(isErrorCode(body.error.code), `${body.error.code} is a code of the table`);
    assert.equal(response.status, errorStatus(body.error.code), `${body.error.code} answered with its own status`);
    return { status: response.status, code: body.error.code, message: body.error.message };
  }

  test('every CoordinatorError answers with its code, its status and its message', async () => {
    for (const code of ALL_ERROR_CODES) {
      const got = await answer(await fetch(`${base}/code/${code}`));
      assert.deepEqual(got, { status: ERROR_STATUS[code], code, message: `refused with ${code}` });
    }
  });

  test(
    'errors that are not ours get a code of the table too, and an internal ' + 'one keeps its details in the log',
    async () => {
      const crash = await answer(await fetch(`${base}/crash`));
      assert.equal(crash.code, 'internal');
      assert.doesNotMatch(crash.message, /secret|var\/lib/);
      assert.ok(
        logged.some((line) => line.includes('secret detail')),
        'the details are logged',
      );

      assert.equal((await answer(await fetch(`${base}/client-error/400`))).code, 'request.invalid');
      assert.equal((await answer(await fetch(`${base}/client-error/404`))).code, 'not_found');
      assert.equal((await answer(await fetch(`${base}/no/such/route`))).code, 'not_found');
      // A status of no code of its own is answered with request.invalid's.
      const unsupported = await answer(await fetch(`${base}/client-error/415`));
      assert.deepEqual([unsupported.status, unsupported.code], [400, 'request.invalid']);

      const post = (body: string): Promise<Response> =>
        fetch(`${base}/small-json`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
      assert.deepEqual(
        await answer(await post(JSON.stringify({ padding: 'x'.repeat(4096) }))).then((a) => [a.status, a.code]),
        [413, 'request.too_large'],
      );
      assert.deepEqual(await answer(await post('{"not json')).then((a) => [a.status, a.code]), [
        400,
        'request.invalid',
      ]);
    },
  );
});

describe('codes read back from SQLite', () => {
  test('a contribution row holding a code this version does not know reads as internal', () => {
    const db = openDatabase(':memory:');
    const store = new ContributionStore(db);
    const base = {
      circuit: 'register',
      contributorId: 'demo:a',
      contributorName: 'a',
      headIndex: 0,
      candidatePath: '/tmp/x',
      size: 1,
      fileHash: 'h',
      createdAt: 1,
    };
    const known = store.create(base);
    store.finish(known.id, { status: 'refused', code: 'contribution.stale', message: 'stale' }, 2);
    assert.equal(store.get(known.id)!.code, 'contribution.stale');
    const unknown = store.create(base);
    store.finish(unknown.id, { status: 'refused', code: 'contribution.stale', message: 'from a newer coordinator' }, 2);
    db.prepare('UPDATE contributions SET code = ? WHERE id = ?').run('contribution.from_the_future', unknown.id);
    assert.deepEqual(
      [store.get(unknown.id)!.code, store.get(unknown.id)!.message],
      ['internal', 'from a newer coordinator'],
    );
    assert.equal(store.create(base).code, null, 'no verdict, no code');
    db.close();
  });

  test('a lobby refusal holding an unknown code is shown as internal, with its message', () => {
    const { lobby, db } = makeLobby();
    lobby.join('alice');
    lobby.tick();
    lobby.markSubmitted('alice', 'register', 'c1');
    lobby.recordVerdict('c1', { status: 'refused', code: 'zkey.malformed', message: 'not a zkey' });
    assert.equal(lobby.status('alice').lastRefusal?.code, 'zkey.malformed');
    db.prepare("UPDATE lobby_refusals SET code = 'zkey.renamed' WHERE contributor_id = 'alice'").run();
    assert.deepEqual(
      [lobby.status('alice').lastRefusal?.code, lobby.status('alice').lastRefusal?.message],
      ['internal', 'not a zkey'],
    );
    db.close();
  });
});
