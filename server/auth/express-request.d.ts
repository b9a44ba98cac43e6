/** Types what the session middleware puts on every Express request. */
import type { Principal } from './principal.ts';

declare global {
  namespace Express {
    interface Request {
      /** Who is signed in (set by the session middleware); undefined when nobody is. */
      principal?: Principal;
      /** The CSRF token of the cookie session; a state-changing request must echo it in `X-CSRF-Token`. */
      csrfToken?: string;
    }
  }
}

export {};
