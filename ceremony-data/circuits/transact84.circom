pragma circom 2.1.0;

include "lib/mix-chain.circom";

// Test stand-in for the production `transact84` circuit: 12 public inputs, 900 rounds.
component main {public [pub]} = MixChain(12, 900);
