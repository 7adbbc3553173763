/**
 * A message as plain text lives in core, so the browser viewer renders rows with the same words
 * as the CLI and the recall tool; compaction re-exports it under its public name.
 */
export { type MessageTextOptions, messageAsText } from '../core/message-text.js';
