/** The contract suite against the in-memory store; a "restart" is a store sharing its data. */
import { MemoryStore } from '../../src/store/index.js';
import { runStoreContract } from './contract.js';

runStoreContract('memory', async () => {
  const store = new MemoryStore();
  return {
    store,
    reopen: async () => new MemoryStore({ sharedWith: store }),
    cleanup: async () => {},
  };
});
