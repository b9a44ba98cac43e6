/**
 * A JSON value in one short line, for messages that must show what a relayer sent back without
 * letting a long or hostile body flood the report (JSON.stringify escapes control characters).
 */
export function describeJsonValue(value: unknown, maxLength = 120): string {
  const text = value === undefined ? 'nothing' : JSON.stringify(value);
  return text.length > maxLength ? `${text.slice(0, maxLength)}…` : text;
}
