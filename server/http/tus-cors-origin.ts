/**
 * tus answers every upload request with `Access-Control-Allow-Origin: *` unless told otherwise
 * (@tus/server `getCorsOrigin`). The uploads carry the session cookie and CSRF token, so only the
 * app's own origin may read those answers: this middleware, mounted in front of the upload
 * handler, rewrites the header tus writes to the public origin when the request comes from it and
 * drops it for any other origin. The upload code itself stays as it is.
 */
import type { RequestHandler } from 'express';
import type { OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';

const ALLOW_ORIGIN = 'access-control-allow-origin';

/** `publicOrigin` undefined: no origin is allowed (the app itself is same-origin and needs no CORS). */
export function tusCorsOrigin(publicOrigin: string | undefined): RequestHandler {
  return (req, res, next) => {
    const allowed = publicOrigin !== undefined && req.get('origin') === publicOrigin;
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => typeof res;
    (res as { writeHead: (...args: unknown[]) => typeof res }).writeHead = (status: unknown, ...rest: unknown[]) => {
      res.removeHeader(ALLOW_ORIGIN);
      const headersIndex = rest.findIndex((arg) => typeof arg === 'object' && arg !== null);
      if (headersIndex !== -1) rest[headersIndex] = withoutAllowOrigin(rest[headersIndex] as RawHeaders);
      if (allowed) {
        res.setHeader('Access-Control-Allow-Origin', publicOrigin!);
        res.appendHeader('Vary', 'Origin');
      }
      return writeHead(status, ...rest);
    };
    next();
  };
}

type RawHeaders = OutgoingHttpHeaders | OutgoingHttpHeader[] | Array<[string, string]> | Headers;

/** The same headers, in the same shape writeHead was given them, less Access-Control-Allow-Origin. */
function withoutAllowOrigin(headers: RawHeaders): RawHeaders {
  if (headers instanceof Headers) {
    const copy = new Headers(headers);
    copy.delete(ALLOW_ORIGIN);
    return copy;
  }
  if (Array.isArray(headers)) {
    if (headers.length > 0 && Array.isArray(headers[0])) return (headers as Array<[string, string]>).filter(([name]) => name.toLowerCase() !== ALLOW_ORIGIN);
    const flat = headers as OutgoingHttpHeader[];
    const out: OutgoingHttpHeader[] = [];
    for (let i = 0; i + 1 < flat.length; i += 2) {
      if (String(flat[i]).toLowerCase() !== ALLOW_ORIGIN) out.push(flat[i]!, flat[i + 1]!);
    }
    return out;
  }
  return Object.fromEntries(Object.entries(headers).filter(([name]) => name.toLowerCase() !== ALLOW_ORIGIN));
}
