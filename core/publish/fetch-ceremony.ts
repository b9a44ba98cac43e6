/**
 * `ceremony fetch URL DIR`: an auditor's copy of everything a coordinator publishes, laid out as
 * `ceremony audit` reads a folder (as `ceremony publish` writes one, less SHA256SUMS and the circom
 * sources). Nothing the coordinator serves decides what runs on the auditor's machine or what the
 * audit trusts: ceremony.json is the auditor's own (core/audit/auditor-config.ts), and a coordinator
 * that serves another ceremony (GET /api/ceremony: its id, circuits, verifiers, public inputs) is
 * refused before any file is fetched; each r1cs and the ptau are held to the pins of the auditor's
 * ceremony.json as they arrive (before the keys, which they define); every path comes from it or
 * from names checked here and stays inside DIR, and the audit is the auditor's next command.
 *
 * Each file is streamed to a temporary name and renamed, so a name in DIR is always a whole
 * download; that is what lets --resume keep the files already there. A 429 or 503 is retried after
 * its Retry-After (the coordinator's rate limits and per-address byte budget), a bounded number of
 * times.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { open, readdir, rm, stat, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';
import { setTimeout as delay } from 'node:timers/promises';
import type { Progress } from '../ceremony/progress.ts';
import { CONFIG_FILE_NAME, type CeremonyConfig } from '../config/ceremony-config.ts';
import { readAuditorConfig, refuseOtherConfig, type ComparableConfig } from '../audit/auditor-config.ts';
import { finalFileUrl, r1csUrl, zkeyFileName, zkeyUrl } from '../coordinator-api/file-urls.ts';
import { FILE_HASH_ALGORITHM, hashFile } from '../crypto/file-hash.ts';
import { CoordinatorError } from '../errors.ts';
import { VERIFIER_COMPILER_RECORD_FILE } from '../finalise/verifier-compiler-record.ts';
import { commitFile, makeDirectory, removeTempLeftovers, tempPathFor, writeFileAtomic } from '../fs/atomic-write.ts';
import { knownPtauFile } from '../ptau/known-ptau-files.ts';
import { QUEUE_LOG_FILE, QUEUE_LOG_MAX_ENTRIES } from '../queue-log/queue-log-entry.ts';
import { RECEIPT_PUBLIC_KEY_FILE } from '../receipts/receipt-public-key-file.ts';

const TRANSCRIPT_FILE = 'transcript/transcript.jsonl';
/** The most entries a page of GET /api/queue-log holds (server/routes/queue-log-router.ts). */
const QUEUE_LOG_PAGE = 1000;
const DEFAULT_RETRIES = 5;
const DEFAULT_MAX_RETRY_WAIT_MS = 10 * 60_000;
/** How much of a refusal's text a message quotes. */
const QUOTED_CHARS = 200;
/*
 * Bounds on what a coordinator may send, so that a hostile one can neither fill the auditor's disk
 * or memory nor keep the fetch from ending (the audit would refuse bad content, but never run):
 * far above an honest ceremony's (a 2^22 key is 2.6 GB, its ptau 4.8 GB; 370 contributions log a
 * few thousand queue entries), far below what harms a machine.
 */
/** A file: a key, the ptau, an r1cs, a final file. */
const MAX_FILE_BYTES = 64 * 2 ** 30;
/** A JSON answer held in memory (the transcript, a page of the queue log). */
const MAX_JSON_BYTES = 512 * 2 ** 20;
/** The start of a refusal's body, for its message. */
const MAX_REFUSAL_BYTES = 64 * 2 ** 10;
/** Entries of the queue log, over all its pages: as many as the audit reads. */
const MAX_QUEUE_LOG_ENTRIES = QUEUE_LOG_MAX_ENTRIES;

export interface FetchCeremonyOptions {
  /** The auditor's own ceremony.json (a checkout's ceremony-data/ceremony.json), copied into DIR. */
  configFile: string;
  /**
   * Complete an interrupted fetch: a key, an r1cs, the ptau or a final file already in DIR is kept,
   * and the partial downloads it left under temporary names are removed.
   */
  resume?: boolean;
  progress?: Progress;
  fetch?: typeof fetch;
  /** Times a 429 or 503 is retried, per request (default 5). */
  retries?: number;
  /** The longest wait a Retry-After may ask for (default 10 minutes); a longer one ends the fetch. */
  maxRetryWaitMs?: number;
  sleep?: (ms: number) => Promise<void>;
}

export interface FetchCeremonyResult {
  dir: string;
  ceremonyId: string;
  /** Files written by this run, and their bytes. */
  files: number;
  bytes: number;
  /** Files --resume found already there and kept. */
  kept: number;
  /** Partial downloads of an interrupted fetch --resume removed (each up to a key's size). */
  partialRemoved: number;
  finalised: boolean;
  /**
   * The ptau's path in DIR, whether it is a known public file, and whether the auditor's ceremony.json
   * pins it (else the audit needs --ptau-hash).
   */
  ptau: { path: string; known: boolean; pinnedByConfig: boolean };
  /** Circuits whose r1cs the auditor's ceremony.json does not pin: the audit needs --r1cs-hash for each. */
  unpinnedR1cs: string[];
}

interface Session {
  base: string;
  root: string;
  resume: boolean;
  progress: Progress;
  fetch: typeof fetch;
  retries: number;
  maxRetryWaitMs: number;
  sleep: (ms: number) => Promise<void>;
  files: number;
  bytes: number;
  kept: number;
}

/** The coordinator's origin (and path prefix, if any), without a trailing slash. */
function coordinatorBase(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new CoordinatorError('usage.invalid_arguments', `not a URL: ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')
    throw new CoordinatorError('usage.invalid_arguments', `the coordinator's address must be http(s), not ${url}`);
  if (parsed.search || parsed.hash)
    throw new CoordinatorError('usage.invalid_arguments', `the coordinator's address takes no query: ${url}`);
  return parsed.href.replace(/\/+$/, '');
}

/** `relative` inside `root`, refused when it leaves it (absolute, or climbing out with `..`). */
function inside(root: string, relative: string, what: string): string {
  const target = path.resolve(root, relative);
  const within = path.relative(root, target);
  if (path.isAbsolute(relative) || within === '' || within.startsWith('..') || path.isAbsolute(within)) {
    throw new CoordinatorError(
      'config.invalid',
      `${what} (${relative}) is outside the folder fetched into; ceremony.json's paths must be relative and inside it`,
    );
  }
  return target;
}

/** The ptau's and each r1cs's path in DIR, from the auditor's ceremony.json; no two files at one path. */
function configuredPaths(config: CeremonyConfig): { ptau: string; r1cs: Map<string, string> } {
  const taken = new Map<string, string>([
    [inside(config.dataDir, CONFIG_FILE_NAME, 'ceremony.json'), 'ceremony.json'],
    [inside(config.dataDir, RECEIPT_PUBLIC_KEY_FILE, 'the receipt key'), 'the receipt key'],
  ]);
  const claim = (relative: string, what: string): string => {
    const target = inside(config.dataDir, relative, what);
    const other = taken.get(target);
    if (other !== undefined)
      throw new CoordinatorError('config.invalid', `${what} (${relative}) is at the path of ${other}`);
    taken.set(target, what);
    return relative;
  };
  const ptau = claim(config.ptau, 'the ptau');
  const r1cs = new Map(config.circuits.map((c) => [c.name, claim(c.r1cs, `the r1cs of ${c.name}`)]));
  return { ptau, r1cs };
}

/** Makes DIR ready; with --resume, returns how many partial downloads it removed from it. */
async function prepareDir(root: string, resume: boolean): Promise<number> {
  const names = await readdir(root).catch((error: NodeJS.ErrnoException) =>
    error.code === 'ENOENT' ? [] : Promise.reject(error),
  );
  if (names.length > 0 && !resume)
    throw new CoordinatorError(
      'fetch.dir_not_empty',
      `${root} is not empty: fetch into a new or empty folder, or complete an interrupted fetch with --resume`,
    );
  await makeDirectory(root);
  // What a fetch stopped mid-download (Ctrl-C, a lost connection) left under temporary names, up
  // to a key each: never completed (the resumed fetch downloads the file again), so removed.
  return names.length > 0 ? removeTempLeftovers(root, { recursive: true }) : 0;
}

/** A coordinator's words, as a message may quote them: one line, no terminal controls, bounded. */
function quoted(text: string): string {
  const line = text.replace(/[\s\u0000-\u001f\u007f-\u009f]+/g, ' ').trim();
  return line.length > QUOTED_CHARS ? `${line.slice(0, QUOTED_CHARS)}…` : line;
}

/** What a refusal says: its `{error: {code, message}}`, else the start of its text. */
async function refusalOf(response: Response): Promise<string> {
  const text = await boundedText(response, MAX_REFUSAL_BYTES, true).catch(() => '');
  try {
    const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown } };
    if (typeof body.error?.code === 'string') return quoted(`${body.error.code}: ${String(body.error.message ?? '')}`);
  } catch {
    // not JSON: a proxy's page, say
  }
  return quoted(text.replace(/<[^>]*>/g, ' '));
}

/**
 * The body as text, at most `limit` bytes: beyond, the rest is cut (`cut`) or the answer refused.
 * Never the whole of an answer a coordinator makes endless.
 */
async function boundedText(response: Response, limit: number, cut = false): Promise<string> {
  const declared = Number(response.headers.get('content-length'));
  if (!cut && declared > limit) throw new Error(`it declares ${declared} bytes, more than the ${limit} taken`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    const bytes = Buffer.from(chunk as Uint8Array);
    chunks.push(bytes);
    size += bytes.length;
    if (size > limit) {
      await response.body?.cancel().catch(() => undefined);
      if (cut) break;
      throw new Error(`it is more than the ${limit} bytes taken`);
    }
  }
  return Buffer.concat(chunks).subarray(0, limit).toString('utf8');
}

/** The wait a 429 or 503 asks for (seconds, or an HTTP date); without one, 1, 2, 4… seconds. */
function retryAfterMs(header: string | null, attempt: number): number {
  if (header !== null && /^\s*\d+\s*$/.test(header)) return Number(header) * 1000;
  const date = header === null ? NaN : Date.parse(header);
  if (Number.isFinite(date)) return Math.max(0, date - Date.now());
  return 1000 * 2 ** attempt;
}

/** GET `route`; a success (2xx) or, when `optional`, undefined for a 404. `what` names the file in messages. */
async function get(
  session: Session,
  route: string,
  what: string,
  subject: string,
  optional = false,
): Promise<Response | undefined> {
  for (let attempt = 0; ; attempt++) {
    let response: Response;
    try {
      // No redirect followed: a coordinator's file is served by the coordinator, and a redirect could
      // send the fetch to another host or into the auditor's own network under a trusted name.
      // Identity encoding: the lengths compared below are of the bytes as sent.
      response = await session.fetch(`${session.base}${route}`, {
        redirect: 'error',
        headers: { 'accept-encoding': 'identity' },
      });
    } catch (error) {
      throw new CoordinatorError(
        'fetch.http_error',
        `GET ${route} (${what}): no answer from ${session.base}: ${quoted((error as Error).message)}`,
      );
    }
    if (response.ok) return response;
    const said = await refusalOf(response);
    if (optional && response.status === 404) return undefined;
    const retryable = response.status === 429 || response.status === 503;
    const waitMs = retryAfterMs(response.headers.get('retry-after'), attempt);
    const fails = `GET ${route} (${what}): HTTP ${response.status}${said ? ` ${said}` : ''}`;
    if (!retryable) throw new CoordinatorError('fetch.http_error', fails);
    if (attempt >= session.retries)
      throw new CoordinatorError('fetch.http_error', `${fails} (still, after ${session.retries} retries)`);
    if (waitMs > session.maxRetryWaitMs)
      throw new CoordinatorError(
        'fetch.http_error',
        `${fails}: it asks to wait ${Math.ceil(waitMs / 1000)} s (a rate limit, or this address's download ` +
          'budget): run the command again then, with --resume',
      );
    const step = `waiting ${Math.ceil(waitMs / 1000)} s: HTTP ${response.status} to GET ${route}`;
    session.progress({ type: 'step', circuit: subject, step });
    await session.sleep(waitMs);
  }
}

async function getJson(session: Session, route: string, what: string, subject: string): Promise<unknown> {
  const response = (await get(session, route, what, subject))!;
  const text = await boundedText(response, MAX_JSON_BYTES).catch((error: Error) => {
    throw new CoordinatorError('fetch.bad_answer', `GET ${route} (${what}): ${quoted(error.message)}`);
  });
  try {
    return JSON.parse(text);
  } catch {
    throw new CoordinatorError('fetch.bad_answer', `GET ${route} (${what}) is not JSON: ${quoted(text)}`);
  }
}

async function isFile(target: string): Promise<boolean> {
  return stat(target).then(
    (info) => info.isFile(),
    () => false,
  );
}

/** An error of our own disk (a write refused, no space): not the coordinator's doing. */
function isLocalFileError(error: unknown): boolean {
  return error instanceof Error && typeof (error as NodeJS.ErrnoException).syscall === 'string';
}

/**
 * Downloads `route` to `relative` in DIR through a temporary file; with `hash`, its BLAKE2b-512 as
 * it streams. Undefined when `optional` and the coordinator has no such file.
 */
async function download(
  session: Session,
  route: string,
  relative: string,
  subject: string,
  options: { hash?: boolean; optional?: boolean } = {},
): Promise<{ blake2b512?: string } | undefined> {
  const target = inside(session.root, relative, relative);
  if (session.resume && (await isFile(target))) {
    session.kept++;
    return options.hash ? { blake2b512: await hashFile(target) } : {};
  }
  session.progress({ type: 'step', circuit: subject, step: `downloading ${relative}` });
  const response = await get(session, route, relative, subject, options.optional);
  if (!response) return undefined;
  await makeDirectory(path.dirname(target));
  const temp = tempPathFor(target);
  const hash = options.hash ? createHash(FILE_HASH_ALGORITHM) : undefined;
  const total = Number(response.headers.get('content-length'));
  if (total > MAX_FILE_BYTES) {
    await response.body?.cancel().catch(() => undefined);
    throw new CoordinatorError(
      'fetch.bad_answer',
      `GET ${route} (${relative}) declares ${total} bytes, more than the ${MAX_FILE_BYTES} a file may have`,
    );
  }
  let done = 0;
  const count = async function* (chunks: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const chunk of chunks) {
      done += chunk.length;
      if (done > MAX_FILE_BYTES) throw new Error(`more than the ${MAX_FILE_BYTES} bytes a file may have`);
      hash?.update(chunk);
      if (total > 0) session.progress({ type: 'count', circuit: subject, part: 'bytes', done, total });
      yield chunk;
    }
  };
  try {
    if (!response.body) throw new Error('the answer has no body');
    const body = Readable.fromWeb(response.body as NodeReadableStream<Uint8Array>);
    await pipeline(body, count, createWriteStream(temp, { flags: 'wx' }));
    if (total > 0 && done !== total) throw new Error(`${done} of its ${total} bytes arrived`);
    await commitFile(temp, target);
  } catch (error) {
    await rm(temp, { force: true });
    if (isLocalFileError(error)) throw error;
    throw new CoordinatorError(
      'fetch.http_error',
      `GET ${route} (${relative}): the download broke off after ${done} bytes: ${quoted((error as Error).message)}`,
    );
  }
  session.files++;
  session.bytes += done;
  return hash ? { blake2b512: hash.digest('hex') } : {};
}

/** The keys the transcript records, by circuit, checked to be the auditor's ceremony's. */
interface TranscriptListing {
  entries: unknown[];
  keys: Array<{ circuit: string; index: number }>;
  finalised: boolean;
}

function listTranscript(answer: unknown, config: CeremonyConfig): TranscriptListing {
  const { ceremony, entries } = (answer ?? {}) as { ceremony?: unknown; entries?: unknown };
  if (typeof ceremony !== 'string' || !Array.isArray(entries))
    throw new CoordinatorError('fetch.bad_answer', 'GET /api/transcript is not a transcript ({ceremony, entries})');
  if (ceremony !== config.id)
    throw new CoordinatorError(
      'fetch.other_ceremony',
      `the coordinator's transcript is of ceremony ${JSON.stringify(quoted(ceremony))}, ` +
        `your ceremony.json of ${config.id}`,
    );
  const names = new Set(config.circuits.map((c) => c.name));
  const keys: TranscriptListing['keys'] = [];
  const seen = new Set<string>();
  let finalised = false;
  for (const entry of entries as Array<{ type?: unknown; circuit?: unknown; index?: unknown; seq?: unknown }>) {
    if (entry?.type === 'finalised') finalised = true;
    if (entry?.type !== 'init' && entry?.type !== 'contribution') continue;
    const { circuit, index } = entry;
    if (typeof circuit !== 'string' || !Number.isSafeInteger(index) || (index as number) < 0)
      throw new CoordinatorError(
        'fetch.bad_answer',
        `transcript entry ${quoted(String(entry.seq))} names no circuit and index of a key`,
      );
    if (!names.has(circuit))
      throw new CoordinatorError(
        'fetch.other_ceremony',
        `the coordinator's transcript has a key of circuit ${JSON.stringify(quoted(circuit))}, ` +
          'which your ceremony.json does not list',
      );
    // Each key once: a transcript naming one twice is corrupt (the audit says so); fetching it again would not end.
    if (seen.has(`${circuit}/${index as number}`))
      throw new CoordinatorError('fetch.bad_answer', `the transcript names key ${index as number} of ${circuit} twice`);
    seen.add(`${circuit}/${index as number}`);
    keys.push({ circuit, index: index as number });
  }
  return { entries, keys, finalised };
}

/**
 * The ceremony the coordinator serves (GET /api/ceremony) against the auditor's ceremony.json: another
 * id is `fetch.other_ceremony`; other circuits, order, verifiers or public inputs are
 * `config.publication_mismatch`, before any file is fetched. (It serves no hashes or minimum: those
 * are held to the auditor's pins as the files arrive, and to the auditor's ceremony.json by the audit.)
 */
function refuseOtherServedCeremony(answer: unknown, config: CeremonyConfig, configFile: string): void {
  const view = (answer ?? {}) as { id?: unknown; testNetwork?: unknown; circuits?: unknown };
  const circuits = Array.isArray(view.circuits) ? (view.circuits as Array<Record<string, unknown> | null>) : undefined;
  const shaped =
    typeof view.id === 'string' &&
    typeof view.testNetwork === 'boolean' &&
    circuits?.every(
      (c) => typeof c?.name === 'string' && typeof c.verifier === 'string' && Number.isSafeInteger(c.publicInputs),
    );
  if (!shaped) throw new CoordinatorError('fetch.bad_answer', 'GET /api/ceremony is not a ceremony ({id, circuits})');
  if (view.id !== config.id)
    throw new CoordinatorError(
      'fetch.other_ceremony',
      `the coordinator serves ceremony ${JSON.stringify(quoted(view.id as string))}, your ceremony.json ${config.id}`,
    );
  const served: ComparableConfig = {
    id: view.id as string,
    testNetwork: view.testNetwork as boolean,
    circuits: circuits!.map((c) => ({
      name: c!.name as string,
      verifier: c!.verifier as string,
      publicInputs: c!.publicInputs as number,
    })),
  };
  refuseOtherConfig(config, served, 'the ceremony the coordinator serves', configFile, {
    top: ['id', 'testNetwork'],
    circuit: ['name', 'verifier', 'publicInputs'],
  });
}

/** A downloaded file's hash against the pin of the auditor's ceremony.json, if it pins one. */
function refuseUnpinnedDownload(
  actual: string | undefined,
  pin: string | undefined,
  code: 'r1cs.hash_mismatch' | 'ptau.hash_mismatch',
  what: string,
): void {
  if (pin === undefined || actual === pin) return;
  throw new CoordinatorError(
    code,
    `${what} the coordinator serves has BLAKE2b-512 ${actual ?? '(none)'}; your ceremony.json pins ${pin}: ` +
      'it is not the file your checkout names, so the keys built on it are not checked against yours',
  );
}

/** Entries of one page of the queue log, each after the one before (so paging always moves on). */
function queueLogPage(answer: unknown, after: number): Array<{ seq: number }> {
  const entries = (answer as { entries?: unknown } | null)?.entries;
  if (!Array.isArray(entries))
    throw new CoordinatorError('fetch.bad_answer', 'GET /api/queue-log is not a page of the queue log ({entries})');
  let last = after;
  for (const entry of entries as Array<{ seq?: unknown } | null>) {
    const seq = entry?.seq;
    if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq <= last)
      throw new CoordinatorError(
        'fetch.bad_answer',
        `GET /api/queue-log: an entry after ${last} is numbered ${quoted(String(seq))}, not after it`,
      );
    last = seq;
  }
  return entries as Array<{ seq: number }>;
}

/** The whole queue log, oldest first, as JSON lines; no file when it is empty. */
async function fetchQueueLog(session: Session): Promise<void> {
  const target = inside(session.root, QUEUE_LOG_FILE, QUEUE_LOG_FILE);
  session.progress({ type: 'step', circuit: 'transcript', step: `downloading ${QUEUE_LOG_FILE}` });
  await makeDirectory(path.dirname(target));
  const temp = tempPathFor(target);
  let handle: FileHandle | undefined = await open(temp, 'wx');
  let count = 0;
  try {
    for (let after = -1; ;) {
      const route = `/api/queue-log?limit=${QUEUE_LOG_PAGE}&after=${after}`;
      const entries = queueLogPage(await getJson(session, route, QUEUE_LOG_FILE, 'transcript'), after);
      if (entries.length > 0) await handle.write(entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
      count += entries.length;
      if (entries.length < QUEUE_LOG_PAGE) break;
      if (count >= MAX_QUEUE_LOG_ENTRIES)
        throw new CoordinatorError(
          'fetch.bad_answer',
          `GET /api/queue-log: more than ${MAX_QUEUE_LOG_ENTRIES} entries, far beyond any ceremony's`,
        );
      after = entries.at(-1)!.seq;
    }
    await handle.close();
    handle = undefined;
    if (count > 0) {
      await commitFile(temp, target);
      session.files++;
    }
  } finally {
    await handle?.close();
    await rm(temp, { force: true });
  }
}

async function fetchFinalFiles(session: Session, config: CeremonyConfig): Promise<void> {
  await download(session, '/api/manifest', 'final/manifest.json', 'final');
  // A ceremony finalised before finalise recorded how its verifiers compile has no compiler.json.
  await download(
    session,
    finalFileUrl(VERIFIER_COMPILER_RECORD_FILE),
    `final/${VERIFIER_COMPILER_RECORD_FILE}`,
    'final',
    {
      optional: true,
    },
  );
  for (const circuit of config.circuits) {
    for (const name of [`${circuit.name}.zkey`, `${circuit.name}.vkey.json`, `${circuit.verifier}.sol`])
      await download(session, finalFileUrl(name), `final/${name}`, 'final');
  }
}

/**
 * Fetches every file `baseUrl`'s coordinator publishes into `dir` (new, or empty unless `resume`),
 * laid out for `ceremony audit dir`, with the auditor's ceremony.json. Does not audit.
 */
export async function fetchCeremony(
  baseUrl: string,
  dir: string,
  options: FetchCeremonyOptions,
): Promise<FetchCeremonyResult> {
  const base = coordinatorBase(baseUrl);
  const root = path.resolve(dir);
  const { text: configText, config } = await readAuditorConfig(options.configFile, root);
  const paths = configuredPaths(config);
  const partialRemoved = await prepareDir(root, options.resume === true);
  const session: Session = {
    base,
    root,
    resume: options.resume === true,
    progress: options.progress ?? (() => {}),
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    retries: options.retries ?? DEFAULT_RETRIES,
    maxRetryWaitMs: options.maxRetryWaitMs ?? DEFAULT_MAX_RETRY_WAIT_MS,
    sleep: options.sleep ?? ((ms) => delay(ms)),
    files: 0,
    bytes: 0,
    kept: 0,
  };

  session.progress({ type: 'step', circuit: 'transcript', step: 'comparing the ceremony served with yours' });
  refuseOtherServedCeremony(
    await getJson(session, '/api/ceremony', 'the ceremony', 'transcript'),
    config,
    options.configFile,
  );
  session.progress({ type: 'step', circuit: 'transcript', step: 'downloading the transcript' });
  const transcript = listTranscript(await getJson(session, '/api/transcript', TRANSCRIPT_FILE, 'transcript'), config);
  // Read right after the transcript, before hours of keys: the two then describe the same moment.
  await fetchQueueLog(session);
  await writeFileAtomic(inside(root, TRANSCRIPT_FILE, TRANSCRIPT_FILE), transcriptJsonl(transcript.entries));
  await writeFileAtomic(inside(root, CONFIG_FILE_NAME, CONFIG_FILE_NAME), configText);
  session.files += 2;
  // The key receipts are signed with: `ceremony verify-receipt RECEIPTS.json DIR` checks against it.
  await download(session, '/api/receipt-key', RECEIPT_PUBLIC_KEY_FILE, 'transcript');
  session.progress({ type: 'finished', circuit: 'transcript' });

  // The r1cs files first: they are small, and they define what every key proves.
  for (const circuit of config.circuits) {
    const r1cs = await download(session, r1csUrl(circuit.name), paths.r1cs.get(circuit.name)!, circuit.name, {
      hash: true,
    });
    refuseUnpinnedDownload(r1cs?.blake2b512, circuit.r1csHash, 'r1cs.hash_mismatch', `the r1cs of ${circuit.name}`);
  }
  const ptau = await download(session, '/api/ptau', paths.ptau, 'ptau', { hash: true });
  refuseUnpinnedDownload(ptau?.blake2b512, config.ptauHash, 'ptau.hash_mismatch', 'the ptau');
  session.progress({ type: 'finished', circuit: 'ptau' });
  for (const circuit of config.circuits) {
    for (const key of transcript.keys.filter((k) => k.circuit === circuit.name))
      await download(session, zkeyUrl(key.circuit, key.index), chainKeyPath(key.circuit, key.index), circuit.name);
    session.progress({ type: 'finished', circuit: circuit.name });
  }
  if (transcript.finalised) {
    await fetchFinalFiles(session, config);
    session.progress({ type: 'finished', circuit: 'final' });
  }
  return {
    dir: root,
    ceremonyId: config.id,
    files: session.files,
    bytes: session.bytes,
    kept: session.kept,
    partialRemoved,
    finalised: transcript.finalised,
    ptau: {
      path: paths.ptau,
      known: knownPtauFile(ptau!.blake2b512!) !== undefined,
      pinnedByConfig: config.ptauHash !== undefined,
    },
    unpinnedR1cs: config.circuits.filter((c) => c.r1csHash === undefined).map((c) => c.name),
  };
}

function chainKeyPath(circuit: string, index: number): string {
  return `chains/${circuit}/${zkeyFileName(circuit, index)}`;
}

/** The transcript's entries as the coordinator's transcript/transcript.jsonl holds them: one JSON a line. */
function transcriptJsonl(entries: readonly unknown[]): string {
  return entries.map((entry) => `${JSON.stringify(entry)}\n`).join('');
}
