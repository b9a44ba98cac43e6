/**
 * Requests a hostile client sends to make the coordinator work, or answer at length, for nothing, on
 * a real coordinator:
 *  - a JSON body on a request refused anyway (anonymous, or to a route that takes none) is never
 *    parsed: the refusal is the route's, not the parser's;
 *  - a join naming thousands of circuits, or none of this ceremony's, is refused with a short message,
 *    its count checked before any entry; a body beyond the parser's limit is `413 request.too_large`;
 *  - every refusal that quotes the request (a path, a query's keys) is bounded in size;
 *  - a request forwarded by a proxy on this machine is not loopback's: no demo sign-in;
 *  - the Semaphore group's member list (public, growing with the group) is limited as the ceremony's
 *    reads are, and a revalidation is a free 304;
 *  - an upload is created at its route only: tus picks its handler by method, so a POST to a sub-path
 *    would create one past the creation limit.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { Identity } from '@semaphore-protocol/identity';
import { ContributorClient } from '../helpers/contributor-client.ts';
import { startTestCoordinator, type TestCoordinator } from '../helpers/test-coordinator.ts';

/** Longer than any message of ours: a refusal's message stays under it, whatever was sent. */
const MESSAGE_BOUND = 1001;

/** Whole answers of the public reads (the ceremony's, the Semaphore group's) per address in this suite. */
const GROUP_READS = 3;

let coordinator: TestCoordinator;

before(async () => {
  coordinator = await startTestCoordinator({
    tickIntervalMs: 60_000,
    env: {
      SEMAPHORE_GROUP_MEMBERS: [1, 2, 3].map((i) => new Identity(`member ${i}`).commitment.toString()).join(','),
      RATE_LIMIT_CEREMONY_READS: String(GROUP_READS),
    },
  });
});

after(async () => {
  await coordinator?.close();
});

async function refusal(response: Response): Promise<{ status: number; code: string; message: string }> {
  const body = (await response.json()) as { error: { code: string; message: string } };
  return { status: response.status, code: body.error.code, message: body.error.message };
}

function post(route: string, body: string, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${coordinator.url}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
}

/** A GET with a body (fetch sends none): what a client may send all the same. */
function getWithBody(route: string, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request(
      `${coordinator.url}${route}`,
      { method: 'GET', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

test('a body on a request refused anyway is never parsed', async () => {
  const malformed = '{"not json';
  const anonymous = await refusal(await post('/api/me/leave', malformed));
  assert.deepEqual([anonymous.status, anonymous.code], [401, 'auth.required']);

  // Under /auth, only a sign-in parses a body, after its rate limit.
  const session = await getWithBody('/auth/session', malformed);
  assert.equal(session.status, 200);
  assert.deepEqual(JSON.parse(session.body), { principal: null });
  const logout = await post('/auth/logout', malformed);
  assert.equal(logout.status, 204);

  // A route that takes a body still parses it, and refuses one that is not JSON.
  const alice = new ContributorClient(coordinator.url);
  await alice.signInDemo('alice');
  const join = await refusal(await post('/api/me/join', malformed, alice.sessionHeaders()));
  assert.deepEqual([join.status, join.code], [400, 'request.invalid']);
});

test('a join is refused on its count before its entries, with a short message', async () => {
  const bob = new ContributorClient(coordinator.url);
  await bob.signInDemo('bob');
  const circuits = coordinator.config.circuits.length;

  const numbers = await refusal(
    await post('/api/me/join', JSON.stringify({ circuits: Array(5000).fill(0) }), bob.sessionHeaders()),
  );
  assert.deepEqual([numbers.status, numbers.code], [400, 'request.invalid']);
  assert.ok(numbers.message.length < MESSAGE_BOUND, `a message of ${numbers.message.length} characters`);
  assert.match(numbers.message, new RegExp(`at most this ceremony's ${circuits} circuits`));

  const strangers = Array.from({ length: circuits }, (_, i) => `${'x'.repeat(99)}${i}`);
  const unknown = await refusal(
    await post('/api/me/join', JSON.stringify({ circuits: strangers }), bob.sessionHeaders()),
  );
  assert.deepEqual([unknown.status, unknown.code], [404, 'circuit.unknown']);
  assert.ok(unknown.message.length < 300, `a message of ${unknown.message.length} characters`);

  const wrongTypes = await refusal(
    await post('/api/me/join', JSON.stringify({ circuits: Array(circuits).fill(0) }), bob.sessionHeaders()),
  );
  assert.deepEqual([wrongTypes.status, wrongTypes.code], [400, 'request.invalid']);
  assert.match(wrongTypes.message, new RegExp(`and ${circuits - 3} more`));

  const padded = JSON.stringify({ circuits: ['register'], pad: 'x'.repeat(20_000) });
  const large = await refusal(await post('/api/me/join', padded, bob.sessionHeaders()));
  assert.deepEqual([large.status, large.code], [413, 'request.too_large']);

  // The honest join is unchanged.
  const joined = await bob.request<{ status: { circuits: Array<{ circuit: string; state: string }> } }>(
    'POST',
    '/api/me/join',
    { circuits: ['register'] },
  );
  assert.notEqual(joined.status.circuits.find((c) => c.circuit === 'register')?.state, 'pending');
});

test('a refusal that quotes the request is bounded', async () => {
  const index = await refusal(await fetch(`${coordinator.url}/api/circuits/register/zkeys/${'9'.repeat(8000)}`));
  assert.deepEqual([index.status, index.code], [400, 'request.invalid']);
  assert.ok(index.message.length < 100, `a message of ${index.message.length} characters`);

  const keys = Array.from({ length: 900 }, (_, i) => `key${i}=1`).join('&');
  const query = await refusal(await fetch(`${coordinator.url}/api/queue-log?${keys}`));
  assert.deepEqual([query.status, query.code], [400, 'request.invalid']);
  assert.ok(query.message.length <= MESSAGE_BOUND, `a message of ${query.message.length} characters`);
});

test('a request a proxy forwarded is not loopback’s: no demo sign-in', async () => {
  // A proxy on this machine connects from loopback, and nginx's default Host is its upstream's address.
  const headers: Array<Record<string, string>> = [
    { 'x-forwarded-for': '203.0.113.7' },
    { forwarded: 'for=203.0.113.7' },
    { 'x-real-ip': '203.0.113.7' },
  ];
  for (const header of headers) {
    const forwarded = await refusal(await post('/auth/demo', JSON.stringify({ name: 'mallory' }), header));
    assert.deepEqual([forwarded.status, forwarded.code], [403, 'auth.demo_disabled'], JSON.stringify(header));
  }
  const local = await post('/auth/demo', JSON.stringify({ name: 'mallory' }));
  assert.equal(local.status, 200);
});

test('the Semaphore group’s member list is limited per address, and a revalidation is free', async () => {
  const first = await fetch(`${coordinator.url}/auth/semaphore/group`);
  assert.equal(first.status, 200);
  assert.equal(((await first.json()) as { members: string[] }).members.length, 3);
  const etag = first.headers.get('etag');
  assert.ok(etag, 'an ETag');
  for (let i = 0; i < 5; i++) {
    // As a cache revalidates (fetch adds `Cache-Control: no-cache` to a conditional request otherwise).
    const again: Response = await fetch(`${coordinator.url}/auth/semaphore/group`, {
      headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' },
    });
    assert.equal(again.status, 304);
  }
  for (let i = 1; i < GROUP_READS; i++)
    assert.equal((await fetch(`${coordinator.url}/auth/semaphore/group`)).status, 200);
  const over = await refusal(await fetch(`${coordinator.url}/auth/semaphore/group`));
  assert.deepEqual([over.status, over.code], [429, 'rate.ceremony_reads']);
});

test('an upload is created at its route only, never at a sub-path past its limit', async () => {
  const carol = new ContributorClient(coordinator.url);
  await carol.signInDemo('carol');
  const circuit = coordinator.config.circuits.at(-1)!.name;
  await carol.request('POST', '/api/me/join', { circuits: [circuit] });
  await carol.waitForState(circuit, 'turn', `a turn on ${circuit}`);

  const subPath = await fetch(`${coordinator.url}/api/circuits/${circuit}/contributions/x`, {
    method: 'POST',
    headers: carol.creationHeaders(circuit, { length: 1024 }),
  });
  const refused = await refusal(subPath);
  assert.deepEqual([refused.status, refused.code], [404, 'not_found']);
  assert.equal((await carol.progress(circuit)).state, 'turn', 'the turn is still hers, no upload under way');
});
