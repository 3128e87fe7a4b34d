/**
 * Where a connection's stream of HTTP/1.1 requests stands, read from the client's bytes alone:
 * between requests, in a request's header block, or in its body (`Content-Length` bytes, or
 * chunked framing to its last chunk and trailers). The deadline listener (`deadlines.ts`) times
 * each phase with this; it does not interpret anything else.
 * @module
 */

/** Where the request stream stands. */
export type Phase = "idle" | "head" | "body";

/** Why a stream cannot be framed: a header block too large, or not HTTP/1.x framing. */
export type FramingError = "header_too_large" | "bad_request";

const CR = 13;
const LF = 10;
const HEAD_END = new Uint8Array([CR, LF, CR, LF]);
/** The longest chunk-size line taken (hex digits and extensions). */
const MAX_CHUNK_LINE = 1024;

type Body =
  | { kind: "length"; left: number }
  | { kind: "chunked"; at: "size" | "data" | "data_end" | "trailer"; left: number; line: string };

/** Follows one connection's requests; feed it every byte the client sends, in order. */
export class RequestFramer {
  /** The phase after the bytes pushed so far. */
  phase: Phase = "idle";
  /** Requests begun so far (the first byte of a header block starts one). */
  started = 0;
  readonly #maxHead: number;
  #head = new Uint8Array(1024);
  #headSize = 0;
  #body: Body | null = null;

  /** `maxHeaderBytes`: the largest header block accepted. */
  constructor(maxHeaderBytes: number) {
    this.#maxHead = maxHeaderBytes;
  }

  /** Takes the next bytes; an error means the connection should be refused and closed. */
  push(bytes: Uint8Array): FramingError | null {
    let at = 0;
    while (at < bytes.length) {
      if (this.phase === "idle") {
        // blank lines between requests are allowed (RFC 9112 §2.2)
        if (bytes[at] === CR || bytes[at] === LF) {
          at++;
          continue;
        }
        this.phase = "head";
        this.started++;
      }
      const taken = this.phase === "head"
        ? this.#takeHead(bytes.subarray(at))
        : this.#takeBody(bytes.subarray(at));
      if (typeof taken === "string") return taken;
      at += taken;
    }
    return null;
  }

  /** Bytes of the header block taken from `bytes` (all of them until the block ends). */
  #takeHead(bytes: Uint8Array): number | FramingError {
    const before = this.#headSize;
    const room = Math.min(bytes.length, this.#maxHead + 4 - before);
    if (before + room > this.#head.length) {
      const grown = new Uint8Array(Math.min(this.#maxHead + 4, (before + room) * 2));
      grown.set(this.#head.subarray(0, before));
      this.#head = grown;
    }
    this.#head.set(bytes.subarray(0, room), before);
    this.#headSize += room;
    const all = this.#head.subarray(0, this.#headSize);
    const end = indexOf(all, HEAD_END, Math.max(0, before - 3));
    if (end < 0) return this.#headSize > this.#maxHead ? "header_too_large" : room;
    const body = bodyOf(new TextDecoder("latin1").decode(all.subarray(0, end)));
    this.#head = new Uint8Array(1024);
    this.#headSize = 0;
    if (body === "bad") return "bad_request";
    this.#body = body;
    this.phase = body ? "body" : "idle";
    return end + 4 - before;
  }

  /** Bytes of the body taken from `bytes`, or an error in its chunked framing. */
  #takeBody(bytes: Uint8Array): number | FramingError {
    const body = this.#body!;
    if (body.kind === "length") {
      const taken = Math.min(body.left, bytes.length);
      body.left -= taken;
      if (body.left === 0) this.#done();
      return taken;
    }
    let at = 0;
    while (at < bytes.length && this.phase === "body") {
      if (body.at === "data") {
        const taken = Math.min(body.left, bytes.length - at);
        body.left -= taken;
        at += taken;
        if (body.left === 0) body.at = "data_end";
        continue;
      }
      const byte = bytes[at++]!;
      if (byte !== LF) {
        if (byte === CR) continue;
        if (body.at === "data_end") return "bad_request";
        if (body.line.length >= MAX_CHUNK_LINE) return "bad_request";
        body.line += String.fromCharCode(byte);
        continue;
      }
      const line = body.line;
      body.line = "";
      if (body.at === "data_end") body.at = "size";
      else if (body.at === "trailer") {
        if (line === "") this.#done();
      } else {
        const hex = line.split(";")[0]!.trim();
        if (!/^[0-9a-f]{1,12}$/i.test(hex)) return "bad_request";
        body.left = parseInt(hex, 16);
        body.at = body.left === 0 ? "trailer" : "data";
      }
    }
    return at;
  }

  #done(): void {
    this.#body = null;
    this.phase = "idle";
  }
}

/** How a request's body is framed, from its header block: none, a length, chunked, or bad. */
function bodyOf(head: string): Body | null | "bad" {
  const [requestLine = "", ...lines] = head.split("\r\n");
  if (!/ HTTP\/1\.[01]$/.test(requestLine)) return "bad";
  let length: number | null = null;
  for (const line of lines) {
    const colon = line.indexOf(":");
    if (colon <= 0) return "bad";
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    if (name === "transfer-encoding") {
      return /chunked\s*$/i.test(value)
        ? { kind: "chunked", at: "size", left: 0, line: "" }
        : "bad";
    }
    if (name === "content-length") {
      if (!/^\d{1,15}$/.test(value) || (length !== null && length !== Number(value))) return "bad";
      length = Number(value);
    }
  }
  return length ? { kind: "length", left: length } : null;
}

function indexOf(haystack: Uint8Array, needle: Uint8Array, from: number): number {
  outer: for (let i = from; i <= haystack.length - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (haystack[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}
