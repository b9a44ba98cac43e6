/**
 * Browser hardening headers for every response (helmet): a Content-Security-Policy that lets the
 * app run exactly what it ships (its own scripts, its module Web Worker, the blob: workers
 * ffjavascript starts for multi-threaded MSMs, WebAssembly compiled from fetched bytes, which needs
 * 'wasm-unsafe-eval', never 'unsafe-eval'), no framing (frame-ancestors 'none' and
 * X-Frame-Options: DENY), nosniff, no referrer. HSTS and upgrade-insecure-requests only when the
 * public URL is https: on a plain-http test network they would break the app.
 */
import type { RequestHandler } from 'express';
import helmet from 'helmet';

export function securityHeaders(options: { https: boolean }): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        'default-src': ["'self'"],
        'script-src': ["'self'", "'wasm-unsafe-eval'"],
        'worker-src': ["'self'", 'blob:'],
        'connect-src': ["'self'"],
        'img-src': ["'self'", 'data:'],
        'style-src': ["'self'"],
        'font-src': ["'self'"],
        'object-src': ["'none'"],
        'base-uri': ["'self'"],
        // GitHub sign-in is a link, not a form: 'self' does not stand in its redirect's way.
        'form-action': ["'self'"],
        'frame-ancestors': ["'none'"],
        ...(options.https ? { 'upgrade-insecure-requests': [] } : {}),
      },
    },
    frameguard: { action: 'deny' },
    referrerPolicy: { policy: 'no-referrer' },
    strictTransportSecurity: options.https ? { maxAge: 365 * 24 * 60 * 60, includeSubDomains: false } : false,
  });
}
