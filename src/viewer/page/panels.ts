/**
 * The panels the page offers, in tab order after the three list views. A view module adds its
 * panel here and nowhere else.
 */
import { conversationPanel } from './conversation.js';
import type { Panel } from './panel.js';
import { sessionPanel } from './session-panel.js';
import { tracePanel } from './trace.js';

/** Every panel, in tab order. */
export const PANELS: readonly Panel[] = [conversationPanel, tracePanel, sessionPanel];
