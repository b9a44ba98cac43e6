pragma circom 2.1.0;

include "lib/mix-chain.circom";

// Test stand-in for the production `transact42` circuit: 12 public inputs, 600 rounds.
component main {public [pub]} = MixChain(12, 600);
