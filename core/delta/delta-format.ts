/**
 * The name and version of the contribution delta format (docs/contribution-delta.md), as an
 * upload declares it (tus metadata `format`) and `GET /api/ceremony` lists it. Its own module,
 * free of Node's modules, so the browser page and the server share the one spelling.
 */
export const DELTA_FORMAT = 'zkey-delta-v1';
