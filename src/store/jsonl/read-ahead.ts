/**
 * Reading a file front to back with one read always in flight: while the scanner checks and
 * parses a chunk, the thread pool already copies the next one, instead of the scanner idling
 * on each read in turn. The reads are exactly those a plain front-to-back reader makes (the
 * next one starts where the bytes in hand end), only earlier; a read nobody then asks for is
 * waited for and its outcome dropped, so no read outlives the scan.
 */
import type { FsFileHandle } from './fs.js';

export class ReadAhead {
  readonly #handle: FsFileHandle;
  readonly #spare: Buffer;
  #pending: Promise<number> | undefined;
  #pendingPosition = -1;

  constructor(handle: FsFileHandle, chunkBytes: number) {
    this.#handle = handle;
    this.#spare = Buffer.allocUnsafe(chunkBytes);
  }

  /** Starts reading the chunk at `position` (unless a read is already in flight). */
  prefetch(position: number): void {
    if (this.#pending !== undefined) return;
    const read = this.#handle.read(this.#spare, 0, this.#spare.length, position);
    // Handled here so that a read the scan never asks for cannot be an unhandled rejection;
    // whoever does ask gets the failure from `read` itself.
    read.catch(() => undefined);
    this.#pending = read;
    this.#pendingPosition = position;
  }

  /** Up to `length` bytes at `position` into `target[offset..]`; resolves to bytes read. */
  async read(target: Buffer, offset: number, length: number, position: number): Promise<number> {
    const pending = this.#pending;
    if (pending !== undefined && this.#pendingPosition === position) {
      this.#pending = undefined;
      const read = Math.min(await pending, length);
      this.#spare.copy(target, offset, 0, read);
      return read;
    }
    await this.settle();
    return this.#handle.read(target, offset, length, position);
  }

  /** Waits for a read still in flight, dropping its outcome. */
  async settle(): Promise<void> {
    const pending = this.#pending;
    this.#pending = undefined;
    if (pending !== undefined) await pending.catch(() => undefined);
  }
}
