/**
 * Splits a byte stream into newline-delimited messages in linear time, with a cap on the size
 * of one message. A line over the cap is dropped as it streams in (only its first and last
 * bytes are kept, to find its JSON-RPC id) and reported once when its newline arrives.
 * @module
 */
import { Buffer } from "node:buffer";

/** The largest message waymark reads, on stdio and HTTP alike: 4 MiB. */
export const MAX_MESSAGE_BYTES = 4 * 1024 * 1024;

/** What is reported about a line that exceeded the cap. */
export interface OversizeLine {
  /** Its size in bytes (without the newline). */
  bytes: number;
  /** The JSON-RPC id found at its start or end, or `null`. */
  id: string | number | null;
}

/** Receives what the splitter finds. */
export interface LineSink {
  /** A complete line within the cap (UTF-8 decoded, `\r\n` accepted). */
  line(text: string): void;
  /** A line over the cap, once, when it ends. */
  oversize(line: OversizeLine): void;
}

const EDGE_BYTES = 512;

/** A newline splitter with a per-line byte cap. Feed it chunks; call `end()` at end of input. */
export class LineSplitter {
  readonly #limit: number;
  readonly #sink: LineSink;
  #parts: Buffer[] = [];
  #size = 0;
  #dropping = false;
  #head: Buffer = Buffer.alloc(0);
  #tail: Buffer = Buffer.alloc(0);

  /** A splitter that hands lines of at most `limit` bytes to `sink`. */
  constructor(limit: number, sink: LineSink) {
    this.#limit = limit;
    this.#sink = sink;
  }

  /** Takes the next chunk of input. Scans only the new bytes, so the cost is linear. */
  push(chunk: Uint8Array): void {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    for (;;) {
      const newline = bytes.indexOf(10, start);
      this.#take(bytes.subarray(start, newline < 0 ? bytes.length : newline));
      if (newline < 0) return;
      this.#finish();
      start = newline + 1;
    }
  }

  /**
   * Ends the input: a last line without its newline is still a line (or, over the cap, still
   * reported), since a client that writes its last message and closes has sent it.
   */
  end(): void {
    if (this.#dropping || this.#size > 0) this.#finish();
  }

  #take(piece: Buffer): void {
    if (piece.length === 0) return;
    this.#size += piece.length;
    if (this.#dropping) {
      this.#tail = lastBytes(Buffer.concat([this.#tail, piece]));
      return;
    }
    this.#parts.push(Buffer.from(piece));
    if (this.#size <= this.#limit) return;
    const all = Buffer.concat(this.#parts);
    this.#head = all.subarray(0, EDGE_BYTES);
    this.#tail = lastBytes(all);
    this.#parts = [];
    this.#dropping = true;
  }

  #finish(): void {
    if (this.#dropping) {
      this.#sink.oversize({ bytes: this.#size, id: findId(this.#head, this.#tail) });
    } else if (this.#size > 0) {
      const text = Buffer.concat(this.#parts).toString("utf8");
      this.#sink.line(text.endsWith("\r") ? text.slice(0, -1) : text);
    }
    this.#parts = [];
    this.#size = 0;
    this.#dropping = false;
    this.#head = this.#tail = Buffer.alloc(0);
  }
}

function lastBytes(bytes: Buffer): Buffer {
  return Buffer.from(bytes.subarray(Math.max(0, bytes.length - EDGE_BYTES)));
}

const ID = String.raw`"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")`;
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}`);
const ID_LAST = new RegExp(String.raw`,\s*${ID}\s*\}\s*\r?$`);

/** Best effort: the id of a message that was too large to parse, from its first or last bytes. */
function findId(head: Buffer, tail: Buffer): string | number | null {
  const match = ID_FIRST.exec(head.toString("utf8")) ?? ID_LAST.exec(tail.toString("utf8"));
  if (!match) return null;
  try {
    const id: unknown = JSON.parse(match[1]);
    return typeof id === "string" || typeof id === "number" ? id : null;
  } catch {
    return null;
  }
}
