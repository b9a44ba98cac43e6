/**
 * `ceremony publish DIR OUT`: writes exactly the public set of a ceremony (public-file-list.ts,
 * an allow-list from ceremony.json and the transcript) to a new folder OUT, or to a gzipped
 * tarball when OUT ends in .tar.gz or .tgz (one top folder named after it), with SHA256SUMS
 * (`sha256sum -c SHA256SUMS` checks it). The private parts of the data folder (state/: SQLite
 * and the receipt signing key; uploads/) and anything else not on the list are never read.
 *
 * Crash safe and never overwriting: everything is written under a temporary name beside OUT,
 * flushed, then renamed to OUT; an existing OUT is refused. The staging folder names its process,
 * so the next publish to OUT removes one a killed publish left. Consistent with a running
 * coordinator: the transcript is read once and that snapshot is what gets published, with exactly
 * the links it records (zkeys are immutable once committed); each zkey is checked against the
 * BLAKE2b-512 the transcript records while it is copied.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { open, readFile, rename, stat } from 'node:fs/promises';
import path from 'node:path';
import { create as createTar } from 'tar';
import { loadCeremonyConfig, type CeremonyConfig } from '../config/ceremony-config.ts';
import { ceremonyPaths } from '../data-folder/ceremony-paths.ts';
import { parseTranscript } from '../transcript/transcript.ts';
import { FILE_HASH_ALGORITHM } from '../crypto/file-hash.ts';
import { fsyncDirectory, makeDirectory } from '../fs/atomic-write.ts';
import { copyNewFlushed, writeNewFlushed } from '../fs/flushed-copy.ts';
import { makeOwnedWorkFolder, removeDeadOwnersFolders } from '../fs/owned-work-folders.ts';
import { CoordinatorError } from '../errors.ts';
import { silentProgress, type Progress } from '../ceremony/progress.ts';
import { publicFileList, type PublicFile } from './public-file-list.ts';
import { QUEUE_LOG_FILE } from '../queue-log/queue-log-entry.ts';
import { PTAU_RECORD_FILE, type PtauRecord } from './published-ptau.ts';

const CHECKSUMS_FILE = 'SHA256SUMS';
const PROGRESS_SUBJECT = 'publish';

export interface PublishOptions {
  /** Leave the ptau out; record its path, size and hashes (and `ptauSource`) in ptau-source.json. */
  withoutPtau?: boolean;
  /** Where auditors can download the ptau (a URL), recorded with `withoutPtau`. */
  ptauSource?: string;
  progress?: Progress;
}

export interface PublishResult {
  out: string;
  tarball: boolean;
  /** Every file of the publication, relative to its root, SHA256SUMS last. */
  files: string[];
  bytes: number;
  ptau: 'included' | 'recorded';
}

function isTarballPath(out: string): boolean {
  return /\.(tar\.gz|tgz)$/i.test(out);
}

const exists = (file: string): Promise<boolean> =>
  stat(file).then(
    () => true,
    () => false,
  );

interface Copied {
  sha256: string;
  blake2b512: string;
  bytes: number;
}

/** Copies `source` to `target` (created exclusively, flushed), hashing it on the way. */
async function copyHashed(source: string, target: string, onBytes: (n: number) => void): Promise<Copied> {
  await makeDirectory(path.dirname(target));
  const sha256 = createHash('sha256');
  const blake = createHash(FILE_HASH_ALGORITHM);
  let bytes = 0;
  await copyNewFlushed(source, target, (chunk) => {
    sha256.update(chunk);
    blake.update(chunk);
    bytes += chunk.byteLength;
    onBytes(chunk.byteLength);
  });
  return { sha256: sha256.digest('hex'), blake2b512: blake.digest('hex'), bytes };
}

async function writeFlushed(target: string, contents: string): Promise<Copied> {
  await makeDirectory(path.dirname(target));
  await writeNewFlushed(target, contents);
  return {
    sha256: createHash('sha256').update(contents).digest('hex'),
    blake2b512: createHash(FILE_HASH_ALGORITHM).update(contents).digest('hex'),
    bytes: Buffer.byteLength(contents),
  };
}

async function hashOnly(source: string, onBytes: (n: number) => void): Promise<Copied> {
  const sha256 = createHash('sha256');
  const blake = createHash(FILE_HASH_ALGORITHM);
  let bytes = 0;
  for await (const chunk of createReadStream(source, { highWaterMark: 1 << 20 })) {
    sha256.update(chunk as Buffer);
    blake.update(chunk as Buffer);
    bytes += (chunk as Buffer).byteLength;
    onBytes((chunk as Buffer).byteLength);
  }
  return { sha256: sha256.digest('hex'), blake2b512: blake.digest('hex'), bytes };
}

async function fileSize(dataDir: string, file: PublicFile): Promise<number> {
  const info = await stat(path.join(dataDir, file.relative)).catch(() => undefined);
  if (!info?.isFile()) {
    const hint =
      file.kind === 'ptau' ? ' (publish with --without-ptau to leave the ptau out and record its hash instead)' : '';
    throw new CoordinatorError('chain.file_missing', `${file.relative} is missing from the data folder${hint}`);
  }
  return info.size;
}

/** The ptau left out, recorded instead: its hashes and size in PTAU_RECORD_FILE under `root`; that file's SHA-256. */
async function recordPtau(
  config: CeremonyConfig,
  root: string,
  ptauSource: string | undefined,
  onBytes: (n: number) => void,
): Promise<string> {
  const hashed = await hashOnly(config.ptauPath, onBytes);
  const record: PtauRecord = {
    file: config.ptau,
    size: hashed.bytes,
    blake2b512: hashed.blake2b512,
    sha256: hashed.sha256,
    ...(ptauSource ? { source: ptauSource } : {}),
    note:
      'The powers of tau was left out of this publication. Download it, check its hash against a source you ' +
      'trust, and run `ceremony audit DIR --ptau FILE` (with `--ptau-hash HASH` unless it is a known public ptau).',
  };
  return (await writeFlushed(path.join(root, PTAU_RECORD_FILE), `${JSON.stringify(record, null, 2)}\n`)).sha256;
}

/**
 * The staged publication renamed to `target`: the folder itself, or (`tarballRoot` set) a tarball of
 * its `tarballRoot` folder. Refused if `target` appeared meanwhile, never replaced.
 */
async function moveIntoPlace(
  staging: string,
  target: string,
  tarballRoot: string | undefined,
  out: string,
  progress: Progress,
): Promise<void> {
  if (tarballRoot !== undefined) {
    progress({ type: 'step', circuit: PROGRESS_SUBJECT, step: `writing ${path.basename(target)}` });
    const archive = path.join(staging, 'publication.tar.gz');
    await createTar({ gzip: true, portable: true, cwd: staging, file: archive }, [tarballRoot]);
    const handle = await open(archive, 'r');
    await handle.sync().finally(() => handle.close());
    if (await exists(target))
      throw new CoordinatorError('publish.out_exists', `${out} appeared while publishing; it was left as it is`);
    await rename(archive, target);
  } else {
    // rename() would replace an empty folder created meanwhile: check again right before it.
    if (await exists(target))
      throw new CoordinatorError('publish.out_exists', `${out} appeared while publishing; it was left as it is`);
    await rename(staging, target);
  }
}

export async function publishCeremony(
  dataDir: string,
  out: string,
  options: PublishOptions = {},
): Promise<PublishResult> {
  const progress = options.progress ?? silentProgress;
  const config = await loadCeremonyConfig(dataDir);
  const target = path.resolve(out);
  const tarball = isTarballPath(target);
  if (await exists(target))
    throw new CoordinatorError(
      'publish.out_exists',
      `${out} already exists; publish writes a new folder or tarball and never overwrites one`,
    );

  // The snapshot that is published: later appends by a running coordinator are not part of it. The
  // queue log first, cut at its last whole line: every acceptance in it names a link the transcript,
  // read after it, already holds (the coordinator commits the link before it logs the acceptance).
  const queueLogText = await readFile(path.join(config.dataDir, QUEUE_LOG_FILE), 'utf8').then(
    (text) => text.slice(0, text.lastIndexOf('\n') + 1),
    () => undefined,
  );
  const transcriptText = await readFile(ceremonyPaths(config.dataDir).transcriptPath, 'utf8').catch(() => '');
  const entries = parseTranscript(transcriptText, config.id);
  if (entries.length === 0)
    throw new CoordinatorError(
      'ceremony.not_initialised',
      `${dataDir} has no transcript entries; run \`ceremony init\` first`,
    );
  const withPtau = !options.withoutPtau;
  const files = await publicFileList(config, entries, { withPtau, queueLog: queueLogText !== undefined });
  const ptauFile = { relative: config.ptau, kind: 'ptau' } as const;

  const sizes = await Promise.all(
    files.filter((f) => f.kind !== 'transcript' && f.kind !== 'queue-log').map((f) => fileSize(config.dataDir, f)),
  );
  const ptauSize = withPtau ? 0 : await fileSize(config.dataDir, ptauFile);
  const total = sizes.reduce((a, b) => a + b, 0) + ptauSize;
  let done = 0;
  const onBytes = (n: number): void => {
    done += n;
    progress({ type: 'count', circuit: PROGRESS_SUBJECT, part: 'bytes', done, total });
  };

  await makeDirectory(path.dirname(target));
  // A publish killed while it copied left its staging folder here: a whole publication's size.
  const stagingPrefix = `.${path.basename(target)}.publishing-`;
  const removed = await removeDeadOwnersFolders(path.dirname(target), stagingPrefix);
  if (removed > 0)
    progress({
      type: 'step',
      circuit: PROGRESS_SUBJECT,
      step: `removed ${removed} staging folder${removed === 1 ? '' : 's'} an interrupted publish left`,
    });
  const stagingFolder = await makeOwnedWorkFolder(path.dirname(target), stagingPrefix);
  const staging = stagingFolder.path;
  try {
    const rootName = path.basename(target).replace(/\.(tar\.gz|tgz)$/i, '');
    const root = tarball ? path.join(staging, rootName) : staging;
    const sums = new Map<string, string>();
    let bytes = 0;

    progress({ type: 'step', circuit: PROGRESS_SUBJECT, step: `copying ${files.length} public files` });
    for (const file of files) {
      const destination = path.join(root, file.relative);
      const copied =
        file.kind === 'transcript'
          ? await writeFlushed(destination, transcriptText)
          : file.kind === 'queue-log'
            ? await writeFlushed(destination, queueLogText!)
            : await copyHashed(path.join(config.dataDir, file.relative), destination, onBytes);
      if (file.fileHash !== undefined && copied.blake2b512 !== file.fileHash) {
        throw new CoordinatorError(
          'chain.file_hash_mismatch',
          `${file.relative} is not the file the transcript records; refusing to publish it`,
        );
      }
      sums.set(file.relative, copied.sha256);
      bytes += copied.bytes;
    }
    let ptau: PublishResult['ptau'] = 'included';
    if (!withPtau) {
      progress({ type: 'step', circuit: PROGRESS_SUBJECT, step: `hashing ${config.ptau} to record it` });
      sums.set(PTAU_RECORD_FILE, await recordPtau(config, root, options.ptauSource, onBytes));
      ptau = 'recorded';
    }
    const listed = [...sums.keys()].sort();
    await writeFlushed(path.join(root, CHECKSUMS_FILE), listed.map((name) => `${sums.get(name)}  ${name}\n`).join(''));

    await moveIntoPlace(staging, target, tarball ? rootName : undefined, out, progress);
    await fsyncDirectory(path.dirname(target));
    progress({ type: 'finished', circuit: PROGRESS_SUBJECT });
    return { out: target, tarball, files: [...listed, CHECKSUMS_FILE], bytes, ptau };
  } finally {
    await stagingFolder.done();
  }
}
