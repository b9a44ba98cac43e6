pragma circom 2.1.0;

include "lib/mix-chain.circom";

// Test stand-in for the production `transact44` circuit: 12 public inputs, 650 rounds.
component main {public [pub]} = MixChain(12, 650);
