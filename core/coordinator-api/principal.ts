/**
 * Who is making a request, once signed in: the coordinator's sessions hold it, and the browser
 * reads it back from GET /api/me and /auth/session. Types only, shared by server/ and web/.
 * Contributor ids are stable and never a login name.
 */
export type PrincipalKind = 'github' | 'semaphore' | 'demo' | 'coordinator-token';

export interface Principal {
  /**
   * `github:<numeric id>`, `semaphore:<nullifier>`, `demo:<name>`; for a coordinator signed in
   * with the token, `coordinator:token`.
   */
  id: string;
  kind: PrincipalKind;
  /** GitHub login, or "anonymous" for Semaphore contributors. */
  displayName: string;
  coordinator: boolean;
}
