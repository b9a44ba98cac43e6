/**
 * A JSON answer serialised once per version of what it is made of, served with a strong ETag of
 * its bytes. The ceremony and its transcript are read by every open page every few seconds, and at
 * 1,800 links each is a few MB that JSON.stringify alone takes ~35 ms to write; they change once
 * per accepted contribution (the ceremony also with the phase and the queues).
 *
 * `Cache-Control: no-cache` lets a browser or a CDN keep the answer but ask again each time: a
 * revalidation whose ETag still matches is a 304 without a body.
 */
import { createHash } from 'node:crypto';
import type { Response } from 'express';

interface Serialised {
  body: Buffer;
  etag: string;
}

export class CachedJson {
  private last: (Serialised & { version: readonly unknown[] }) | undefined;

  /**
   * The answer for `version` (compared item by item with ===: the state object the reader caches
   * per transcript version, and any other value it is made of), built and serialised only when the
   * version differs from the last one's.
   */
  of(version: readonly unknown[], build: () => unknown): Serialised {
    const last = this.last;
    if (last && last.version.length === version.length && last.version.every((v, i) => v === version[i])) return last;
    const body = Buffer.from(JSON.stringify(build()));
    const etag = `"${createHash('sha256').update(body).digest('base64url')}"`;
    this.last = { version, body, etag };
    return this.last;
  }
}

/** Sends `answer`, or a 304 when the request's If-None-Match names its ETag (Express's freshness check). */
export function sendSerialised(res: Response, answer: Serialised): void {
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('ETag', answer.etag);
  res.type('application/json');
  res.send(answer.body);
}
