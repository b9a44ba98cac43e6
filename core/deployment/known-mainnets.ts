/**
 * Chain ids of well-known EVM mainnets (EIP-155), for the one refusal that needs to know a
 * mainnet when it sees one: a test-network ceremony's keys checked against its verifiers. The list
 * is short on purpose and proves nothing the other way: a chain id missing here is not a test
 * network, which is why a test-network ceremony is warned about on every chain.
 */
const KNOWN_MAINNETS: ReadonlyMap<number, string> = new Map([
  [1, 'Ethereum mainnet'],
  [10, 'OP Mainnet'],
  [56, 'BNB Smart Chain'],
  [100, 'Gnosis'],
  [137, 'Polygon PoS'],
  [8453, 'Base'],
  [42161, 'Arbitrum One'],
  [43114, 'Avalanche C-Chain'],
]);

/** The mainnet's name, or undefined for a chain id this list does not know. */
export function knownMainnet(chainId: number): string | undefined {
  return KNOWN_MAINNETS.get(chainId);
}
