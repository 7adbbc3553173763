/**
 * What a caller of `sessionMiddleware` can set.
 */
import type { StepContext } from '../../agent/index.js';
import type { SessionEvent } from '../../core/index.js';
import type { PriceTable } from '../../model/index.js';

/** Options of {@link sessionMiddleware}. */
export interface SessionMiddlewareOptions {
  /**
   * Runs before each model call once the prompt's new messages are in the log, like the loop's
   * `beforeStep`: `autoCompaction(...)` from `palimpsest/compaction` fits here. When it rewrites
   * the surface, the call sends the surface instead of the SDK's own history.
   */
  readonly beforeStep?: (context: StepContext) => void | Promise<void>;
  /** Told about every event the middleware appends, in order. */
  readonly onEvent?: (event: SessionEvent) => void;
  /**
   * The price table whose rates for the model are recorded in each `request/header` (`price`),
   * so `sessionCost` prices the session as it was billed. Default `DEFAULT_PRICES`; `false`
   * records none.
   */
  readonly prices?: PriceTable | false;
}
