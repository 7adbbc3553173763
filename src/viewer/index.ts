/**
 * The web viewer: the loopback server of `palimpsest view` and the HTML export. The page itself
 * (src/viewer/page/) is bundled for the browser at build time and imports core only.
 */
export { ViewerError, type ViewerErrorCode } from './errors.js';
export { exportHtml, inertJson } from './export-html.js';
export type {
  SessionList,
  SessionListing,
  SessionSnapshot,
  SessionTree,
  StreamLine,
  VerifyStatus,
} from './protocol.js';
export {
  SERVED_CSP,
  startViewerServer,
  type ViewerServer,
  type ViewerServerOptions,
} from './server.js';
export { sessionTree, verifyStatus } from './session-routes.js';
