/** Who is making a request, once signed in: the shape the browser reads too, defined in core/coordinator-api/. */
export type { Principal, PrincipalKind } from '../../core/coordinator-api/principal.ts';
