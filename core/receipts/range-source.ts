/**
 * Reading parts of a (large) file without fetching it whole: the receipt check reads a zkey's
 * section table, its header and its contribution history, a few kilobytes of a key of a hundred
 * megabytes. `httpRangeSource` does it with HTTP Range requests (fetch, so the same code runs in
 * the page and in Node) and refuses a server that answers a range with the whole file rather than
 * download it; the CLI reads a published folder through its own source on a file handle
 * (folder-evidence.ts). Each source counts the bytes and requests it used, which the page shows
 * and the tests and the bench measure.
 */
import { CoordinatorError } from '../errors.ts';

export interface RangeSource {
  /** How messages name the file, e.g. "the final key of register". */
  readonly label: string;
  /** Up to `length` bytes of the file from `offset`: fewer only where the file ends. */
  read(offset: number, length: number): Promise<Uint8Array>;
  /** The file's size in bytes, known once a read has answered. */
  readonly fileSize: number | undefined;
  /** Bytes of the file received so far. */
  readonly bytesRead: number;
  readonly requests: number;
}

const CONTENT_RANGE = /^bytes (\d+)-(\d+)\/(\d+)$/;
const UNSATISFIED_RANGE = /^bytes \*\/(\d+)$/;

export interface HttpRangeSourceOptions {
  label: string;
  /** Defaults to the global fetch. */
  fetch?: typeof fetch;
}

export function httpRangeSource(url: string, options: HttpRangeSourceOptions): RangeSource {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const label = options.label;
  const unavailable = (why: string): CoordinatorError =>
    new CoordinatorError('receipt.source_unavailable', `cannot read ${label}: ${why}`);
  const source = {
    label,
    fileSize: undefined as number | undefined,
    bytesRead: 0,
    requests: 0,
    async read(offset: number, length: number): Promise<Uint8Array> {
      if (length <= 0) return new Uint8Array(0);
      if (source.fileSize !== undefined && offset >= source.fileSize) return new Uint8Array(0);
      source.requests++;
      let response: Response;
      try {
        response = await fetchImpl(url, {
          headers: { Range: `bytes=${offset}-${offset + length - 1}` },
          cache: 'no-store',
        });
      } catch (error) {
        throw unavailable(`the request failed (${(error as Error).message})`);
      }
      const contentRange = response.headers.get('content-range') ?? '';
      if (response.status === 416) {
        await response.body?.cancel();
        const size = UNSATISFIED_RANGE.exec(contentRange);
        if (!size) throw unavailable('the server refused a range without saying the file size');
        source.fileSize = Number(size[1]);
        return new Uint8Array(0);
      }
      if (response.status !== 206) {
        // Never read the body of a 200: it is the whole key, which this check exists not to download.
        await response.body?.cancel();
        if (response.status === 200)
          throw unavailable(
            'the server answered a range request with the whole file (it does not serve byte ranges); ' +
              'the check reads only parts of a key and does not download all of it',
          );
        if (response.status === 404) throw unavailable('it does not exist there (HTTP 404)');
        throw unavailable(`HTTP ${response.status}`);
      }
      const range = CONTENT_RANGE.exec(contentRange);
      if (!range) {
        await response.body?.cancel();
        throw unavailable(`the server's answer has no usable Content-Range ("${contentRange.slice(0, 80)}")`);
      }
      const [start, end, size] = [Number(range[1]), Number(range[2]), Number(range[3])];
      if (start !== offset || end < start || end - start + 1 > length || end >= size) {
        await response.body?.cancel();
        throw unavailable(
          `the server answered bytes ${start}-${end} of ${size} to a request for ${length} bytes at ${offset}`,
        );
      }
      const bytes = new Uint8Array(await response.arrayBuffer());
      source.bytesRead += bytes.length;
      if (bytes.length !== end - start + 1)
        throw unavailable(`the answer holds ${bytes.length} bytes where its Content-Range says ${end - start + 1}`);
      source.fileSize = size;
      return bytes;
    },
  };
  return source;
}
