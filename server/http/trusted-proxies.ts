/**
 * TRUST_PROXY: the reverse proxies whose `X-Forwarded-For` names the client, by the addresses they
 * connect from (addresses, CIDRs, or proxy-addr's names `loopback`, `linklocal`, `uniquelocal`),
 * never by a hop count. A hop count trusts whoever reaches the coordinator's port: a client that
 * connects directly writes its own `X-Forwarded-For` and picks which address pays the download
 * budget and the rate limits. With addresses, the client is the nearest address that is not a
 * trusted proxy (Express's `trust proxy`, proxy-addr): a header from anyone else is ignored.
 */
import { isIP } from 'node:net';

/** proxy-addr's named ranges (Express compiles them): loopback, link-local, private addresses. */
const NAMED_RANGES = new Set(['loopback', 'linklocal', 'uniquelocal']);

const TRUST_PROXY_EXAMPLE =
  'name the proxies by the addresses they connect from, e.g. TRUST_PROXY=172.28.0.0/16 or ' +
  'TRUST_PROXY=10.0.0.2,10.0.0.3 (or loopback for a proxy on this machine); leave it unset when no proxy is in front';

/**
 * The trusted proxies of a TRUST_PROXY value (comma-separated; empty: none), or why it is refused:
 * a number or a boolean (a hop count, or everyone), a range of every address, anything not an
 * address, a CIDR or a named range.
 */
export function parseTrustedProxies(raw: string): { proxies: readonly string[] } | { refused: string } {
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  if (items.length > 1000) return { refused: `at most 1000 entries; ${TRUST_PROXY_EXAMPLE}` };
  const proxies: string[] = [];
  for (const item of items) {
    const shown = item.length > 60 ? `${item.slice(0, 60)}…` : item;
    if (/^\d+$/.test(item) || /^(true|false|yes|no|on|off)$/i.test(item))
      return {
        refused: `"${shown}" is not accepted: a hop count or a boolean trusts any client; ${TRUST_PROXY_EXAMPLE}`,
      };
    if (NAMED_RANGES.has(item.toLowerCase())) {
      proxies.push(item.toLowerCase());
      continue;
    }
    const [address, prefix, ...rest] = item.split('/');
    const family = isIP(address ?? '');
    const bits = family === 4 ? 32 : 128;
    const prefixOk = prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= bits);
    if (family === 0 || rest.length > 0 || !prefixOk)
      return { refused: `"${shown}" is not an address or a CIDR; ${TRUST_PROXY_EXAMPLE}` };
    if (prefix !== undefined && Number(prefix) === 0)
      return { refused: `"${shown}" trusts every address, so any client could name itself; ${TRUST_PROXY_EXAMPLE}` };
    proxies.push(item);
  }
  return { proxies };
}
