/**
 * JSON request bodies, parsed only by the routes that take one and only once the guards and limits
 * in front of them have passed: a sign-in after its rate limit, a join after the contributor's
 * session, CSRF token and join limit, a coordinator action after the coordinator's. Any other request
 * (anonymous, or to a route that takes no body) has its body left unread, so a client cannot make the
 * coordinator parse JSON (up to tens of milliseconds for a deeply nested 200 kB body) on a request it
 * then refuses. The largest honest body is a Semaphore proof of about 1.2 kB, or a join naming every
 * circuit.
 */
import express, { type RequestHandler } from 'express';

/** The most a route's JSON body may hold: above every honest body by a wide margin. */
const JSON_BODY_LIMIT_BYTES = 16 * 1024;

/** Parses a JSON body of at most JSON_BODY_LIMIT_BYTES; beyond, `413 request.too_large`. */
export function jsonBody(): RequestHandler {
  return express.json({ limit: JSON_BODY_LIMIT_BYTES });
}
