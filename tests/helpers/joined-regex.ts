/** A regular expression written in parts (each a regex literal), so no line runs long. */
export const joined = (flags: string, ...parts: RegExp[]): RegExp =>
  new RegExp(parts.map((p) => p.source).join(''), flags);
