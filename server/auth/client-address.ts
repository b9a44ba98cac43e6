/**
 * The client's address as the rate limits key it (an IPv6 address by its /56), hashed: what the
 * per-address caps on sign-ins in progress count by, with no address stored.
 */
import { createHash } from 'node:crypto';
import type { Request } from 'express';
import { ipKeyGenerator } from 'express-rate-limit';

export function hashClient(req: Request): string {
  return createHash('sha256')
    .update(ipKeyGenerator(req.ip ?? req.socket.remoteAddress ?? 'unknown'))
    .digest('hex');
}
