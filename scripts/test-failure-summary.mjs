// A node:test reporter that writes one short block per failed test (file, name, first lines of the
// error) and nothing else. `npm test` runs it beside TAP and prints its file at the very end, so the
// last lines of a long CI log name what failed instead of the last passing test.
import path from 'node:path';

const MAX_MESSAGE_LINES = 12;
const MAX_FRAMES = 3;
const MAX_LINE_CHARS = 300;

// The message, then the first frames outside Node's own code (where the test or the code it ran threw).
function errorLines(error) {
  const cause = error?.cause ?? error;
  const lines = String(cause?.stack ?? cause?.message ?? cause ?? 'no error text').split('\n');
  const isFrame = (line) => /^\s+at /.test(line);
  const message = lines.filter((line) => !isFrame(line)).slice(0, MAX_MESSAGE_LINES);
  const frames = lines
    .filter((line) => isFrame(line) && !/\(node:|at node:|\(<anonymous>\)/.test(line))
    .slice(0, MAX_FRAMES);
  return [...message, ...frames].map((line) =>
    line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) + '…' : line,
  );
}

export default async function* failureSummary(source) {
  for await (const event of source) {
    if (event.type !== 'test:fail') continue;
    const { name, file, details } = event.data;
    // A suite fails when one of its tests does: the test's own block already says why.
    if (details?.error?.failureType === 'subtestsFailed') continue;
    const where = file ? path.relative(process.cwd(), file) : '(no file)';
    yield `✗ ${where} › ${name}\n${errorLines(details?.error)
      .map((line) => `    ${line}`)
      .join('\n')}\n`;
  }
}
