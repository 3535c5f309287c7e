/** Moved to src/bench/ledger-chain.ts (shipped: `svc bench forward` builds its ledger with it); kept here for the scenarios. */
export { generateChain } from '../../src/bench/ledger-chain.js';
