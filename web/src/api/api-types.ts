/**
 * The coordinator's JSON answers, as the pages import them: defined once for every client in
 * core/coordinator-api/api-types.ts (web/ never imports server/).
 */
export type * from '../../../core/coordinator-api/api-types.ts';
