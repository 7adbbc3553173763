/**
 * A panel: a view of the whole session drawn into its own element rather than as rows of the
 * virtual list (the conversation, the trace, the session's totals). The controller shows one view
 * at a time; it draws a panel when the panel is shown and hands it each live batch while shown.
 */
import type { SessionLinker } from './app.js';
import type { ViewedSession } from './state.js';

/** What a panel may ask of the page around it. */
export interface PanelContext {
  /** Turns a session id into a link (a hash route when served, plain text in an export). */
  readonly sessionLink: (id: string, className: string) => HTMLElement;
  /** Shows event `seq` in the list views, selected, with its detail and provenance. */
  readonly reveal: (seq: number) => void;
  /** Sessions forked from this one (empty in an export). */
  readonly children: readonly string[];
  /** How the served page links to another session (`undefined` in an export). */
  readonly linker: SessionLinker;
}

/** What the reading keys do in a panel while it is shown (the list views' rows are hidden then). */
export interface PanelKeys {
  /** `j`/`k` and ↓/↑: moves to the next (`1`) or previous (`-1`) item and scrolls it into view. */
  move?(into: HTMLElement, by: 1 | -1): void;
  /** Enter outside any control (a control handles its own Enter): opens the current item. */
  open?(into: HTMLElement): void;
  /** The panel's keys as the key help lists them: the key, what it does. */
  readonly help: readonly (readonly [string, string])[];
}

/** A view of the session that is not a list of rows. */
export interface Panel {
  /** The view's name, also the value of `data-view` on its tab and on `<body>`. */
  readonly name: string;
  /** The tab's text. */
  readonly label: string;
  /** The key that shows the panel (the list views take 1, 2 and 3). */
  readonly key: string;
  /** What `j`/`k`, the arrows and Enter do while it is shown (without it: nothing). */
  readonly keys?: PanelKeys;
  /** Draws the panel for the session as it now stands, replacing what `into` held. */
  render(into: HTMLElement, viewed: ViewedSession, context: PanelContext): void;
  /**
   * Applies a live batch (the events from seq `from` on) while the panel is shown. Without it the
   * panel is drawn again.
   */
  extend?(into: HTMLElement, viewed: ViewedSession, from: number, context: PanelContext): void;
}
