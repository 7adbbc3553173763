/**
 * Errors of the viewer's server and export, with stable codes the CLI maps to exit codes.
 */
import { PalimpsestError } from '../core/index.js';

/**
 * Codes of {@link ViewerError}.
 *
 * - `INVALID_PORT`: `--port` is not an integer from 0 to 65535.
 * - `PORT_UNAVAILABLE`: the port could not be listened on (taken, or not permitted).
 * - `NOT_BUILT`: the bundled page is missing (the package was not built).
 */
export type ViewerErrorCode = 'INVALID_PORT' | 'PORT_UNAVAILABLE' | 'NOT_BUILT';

/** A failure to serve or export the viewer. */
export class ViewerError extends PalimpsestError {
  static override readonly kind: string = 'ViewerError';
  declare readonly code: ViewerErrorCode;

  constructor(code: ViewerErrorCode, message: string, options?: { cause?: unknown }) {
    super(code, message, options);
  }
}
