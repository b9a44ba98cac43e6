/**
 * Compiling and deploying Solidity in tests: solc-js (the wasm build, so no system compiler is
 * needed) and a viem wallet on anvil's first dev account. solc-js is slow, so callers compile
 * everything they need in one `compileContracts` call.
 */
import solc from 'solc';
import { createPublicClient, createWalletClient, http, type Abi, type Address, type Hex } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import { foundry } from 'viem/chains';
import { ANVIL_DEV_PRIVATE_KEY } from './anvil.ts';

export interface CompiledContract {
  abi: Abi;
  bytecode: Hex;
}

interface SolcContract {
  abi: Abi;
  evm: { bytecode: { object: string }; deployedBytecode: { object: string } };
}

/** Every contract of `sources` compiled in one solc call, keyed `<source name>:<contract name>`. */
function compileAll(sources: Record<string, string>, settings: Record<string, unknown>): Map<string, SolcContract> {
  const input = {
    language: 'Solidity',
    sources: Object.fromEntries(Object.entries(sources).map(([name, content]) => [name, { content }])),
    settings: {
      ...settings,
      outputSelection: { '*': { '*': ['abi', 'evm.bytecode.object', 'evm.deployedBytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input)) as string) as {
    errors?: Array<{ severity: string; formattedMessage: string }>;
    contracts?: Record<string, Record<string, SolcContract>>;
  };
  const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
  if (errors.length > 0) {
    throw new Error(`solc failed:\n${errors.map((e) => e.formattedMessage).join('\n')}`);
  }
  const compiled = new Map<string, SolcContract>();
  for (const [sourceName, contracts] of Object.entries(output.contracts ?? {})) {
    for (const [contractName, contract] of Object.entries(contracts))
      compiled.set(`${sourceName}:${contractName}`, contract);
  }
  return compiled;
}

/**
 * Compiles every source in one solc call, by default with the optimizer on as a deployment would
 * be (or with `settings`, Standard JSON settings such as a ceremony's final/compiler.json records).
 * Returns the contracts keyed `<source name>:<contract name>`, so equal contract names in
 * different sources do not collide.
 */
export function compileContracts(
  sources: Record<string, string>,
  settings: Record<string, unknown> = { optimizer: { enabled: true, runs: 200 } },
): Map<string, CompiledContract> {
  const compiled = new Map<string, CompiledContract>();
  for (const [key, contract] of compileAll(sources, settings)) {
    compiled.set(key, { abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` });
  }
  return compiled;
}

/** The runtime code (`0x…`) of every contract of `sources`, keyed as `compileContracts` keys them. */
export function compileRuntimeCodes(
  sources: Record<string, string>,
  settings: Record<string, unknown>,
): Map<string, Hex> {
  const codes = new Map<string, Hex>();
  for (const [key, contract] of compileAll(sources, settings))
    codes.set(key, `0x${contract.evm.deployedBytecode.object}`);
  return codes;
}

/**
 * Deploys the contracts in order from anvil's dev account and returns their addresses in the
 * same order. Transactions are sent one after another (anvil automines each) so nonces never race.
 * The node's own chain id is signed for, so an anvil started with `--chain-id` takes them too.
 */
export async function deployContracts(rpcUrl: string, contracts: CompiledContract[]): Promise<Address[]> {
  const account = privateKeyToAccount(ANVIL_DEV_PRIVATE_KEY);
  const transport = http(rpcUrl, { timeout: 10_000, retryCount: 0 });
  const chain = { ...foundry, id: await createPublicClient({ transport }).getChainId() };
  const wallet = createWalletClient({ account, chain, transport });
  const publicClient = createPublicClient({ chain, transport });
  const addresses: Address[] = [];
  for (const contract of contracts) {
    const hash = await wallet.deployContract({ abi: contract.abi, bytecode: contract.bytecode });
    const receipt = await publicClient.waitForTransactionReceipt({ hash, pollingInterval: 50 });
    if (receipt.status !== 'success' || !receipt.contractAddress) {
      throw new Error(`deployment transaction ${hash} failed`);
    }
    addresses.push(receipt.contractAddress);
  }
  return addresses;
}

/**
 * Creation code that deploys `runtime` as it is (CODECOPY of the bytes after it, then RETURN): for
 * contracts no compiler makes, such as a forger's hand-written code.
 */
export function creationCodeFor(runtime: Hex): CompiledContract {
  const body = runtime.slice(2);
  const length = body.length / 2;
  if (length > 0xffff) throw new Error('runtime code too long for this creation code');
  const push2 = (value: number) => `61${value.toString(16).padStart(4, '0')}`;
  // PUSH2 len, PUSH2 offset (the 15 bytes of this prefix), PUSH1 0, CODECOPY, PUSH2 len, PUSH1 0, RETURN
  const prefix = `${push2(length)}${push2(15)}600039${push2(length)}6000f3`;
  return { abi: [], bytecode: `0x${prefix}${body}` };
}
