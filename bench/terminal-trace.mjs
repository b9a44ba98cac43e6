// Loaded with `node --import` into the terminal client the turn bench starts (bench/terminal-timeline.ts):
// writes one JSON line per HTTP event of the process's main thread to the file CEREMONY_BENCH_TRACE
// names, from Node's diagnostics channels (fetch's undici and node:http, which tus uses), so the bench
// can say where a turn's seconds went without any code of the client knowing it is timed.
import dc from 'node:diagnostics_channel';
import { appendFileSync } from 'node:fs';
import { isMainThread } from 'node:worker_threads';

const file = process.env.CEREMONY_BENCH_TRACE;
if (file && isMainThread) {
  const write = (event, fields = {}) => {
    appendFileSync(file, `${JSON.stringify({ at: performance.timeOrigin + performance.now(), event, ...fields })}\n`);
  };
  write('started', { processStartedAt: performance.timeOrigin });
  dc.subscribe('undici:request:create', ({ request }) =>
    write('request', { method: request.method, path: request.path }),
  );
  dc.subscribe('undici:request:headers', ({ request, response }) =>
    write('response', { method: request.method, path: request.path, status: response.statusCode }),
  );
  dc.subscribe('undici:request:trailers', ({ request }) =>
    write('body end', { method: request.method, path: request.path }),
  );
  dc.subscribe('http.client.request.start', ({ request }) =>
    write('request', { method: request.method, path: request.path }),
  );
  dc.subscribe('http.client.response.finish', ({ request, response }) =>
    write('response', { method: request.method, path: request.path, status: response.statusCode }),
  );
  process.on('exit', () => write('exit'));
}
