/**
 * What `require('palimpsest')` loads: palimpsest is an ES module package, and a CommonJS caller
 * gets this explanation instead of Node's "No exports main defined".
 */
const message =
  "palimpsest is an ES module package and cannot be loaded with require(); use `import { Session } from 'palimpsest'` in an ES module, or `const { Session } = await import('palimpsest')` from CommonJS";
throw Object.assign(new Error(message), { code: 'ERR_REQUIRE_ESM' });
