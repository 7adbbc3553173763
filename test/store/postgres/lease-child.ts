/**
 * A worker for the lease tests: opens session `id` of the PostgreSQL store, records a turn that
 * stops inside a tool call, prints `ready`, and waits to be killed.
 * Usage: lease-child.ts URL SCHEMA ID LEASE_MS
 */

import { openSession } from '../../../src/store/index.js';
import { openPostgresStore } from '../../../src/store/postgres/index.js';

const [url, schema, id, leaseMs] = process.argv.slice(2) as [string, string, string, string];
const store = await openPostgresStore({ connectionString: url, schema, leaseMs: Number(leaseMs) });
const session = await openSession(store, id);
session.append('turn/start', { turn: 1 });
session.append(
  'user/message',
  {
    id: 'u1',
    role: 'user',
    content: [{ type: 'text', text: 'write it' }],
    source: { kind: 'user' },
  },
  { surfaceOp: 'append' },
);
session.append('step/start', { turn: 1, step: 1 });
session.append(
  'assistant/message',
  {
    turn: 1,
    step: 1,
    finishReason: 'tool-calls',
    message: {
      id: 'a1',
      role: 'assistant',
      content: [{ type: 'tool-call', id: 'c1', name: 'write', arguments: '{}' }],
      source: { kind: 'model', provider: 'test', model: 'test' },
    },
  },
  { surfaceOp: 'append', sourceEventSeqs: [] },
);
session.append('tool/call', { turn: 1, step: 1, callId: 'c1', name: 'write', arguments: '{}' });
await session.flush();
process.stdout.write('ready\n');
setInterval(() => {}, 1000);
