/**
 * Splits a byte stream into lines. The bytes of a line are kept until its newline comes and the
 * line is decoded once, whole: a snapshot line of tens of MB then costs the page one string.
 * Decoding the stream as it came (a `TextDecoderStream`) made a string per network piece, then a
 * string of them joined and another when the joined string was flattened to search it, all on
 * the JS heap, where the garbage collector had to copy and trace them right before the parse.
 * Splitting on the byte 0x0A is safe in UTF-8: no multi-byte sequence contains it.
 */
const NEWLINE = 0x0a;

export class LineSplitter {
  private pieces: Uint8Array[] = [];
  private pending = 0;

  /** Takes the next piece of the stream and calls `line` with each line it completes. */
  push(chunk: Uint8Array, line: (bytes: Uint8Array) => void): void {
    let start = 0;
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      const tail = chunk.subarray(start, end);
      start = end + 1;
      const whole = this.pending === 0 ? tail : this.join(tail);
      if (whole.length > 0) line(whole);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pieces.push(rest);
      this.pending += rest.length;
    }
  }

  /** The pieces kept so far followed by `tail`, as one array; the pieces are dropped. */
  private join(tail: Uint8Array): Uint8Array {
    const whole = new Uint8Array(this.pending + tail.length);
    let at = 0;
    for (const piece of this.pieces) {
      whole.set(piece, at);
      at += piece.length;
    }
    whole.set(tail, at);
    this.pieces = [];
    this.pending = 0;
    return whole;
  }
}
