/**
 * Prints, as JSON, the items a fresh process reads back from a JSONL store:
 * `items-child.ts DIR ID`.
 */
import { PalimpsestSession } from '../../../src/adapters/openai-agents/index.js';
import { openStore } from '../../../src/store/index.js';

const [directory, id] = process.argv.slice(2);
const store = await openStore(`jsonl:${directory}`);
const session = await PalimpsestSession.open(store, id as string, { create: false });
process.stdout.write(JSON.stringify(await session.getItems()));
await session.close();
await store.close();
