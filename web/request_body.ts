/**
 * Reading an HTTP request's body once, capped, before anything classifies it. The SDK reads a
 * POST twice when it routes (a `request.clone()` for the classification, then the original),
 * and a clone's second branch keeps every chunk the first has read: a body trickled a byte per
 * TCP segment cost about 1.7 KB of memory per byte, never freed. Here the chunks go into one
 * buffer that grows by doubling up to the cap (exactly the declared size when there is a
 * `Content-Length`), so a request holds at most about twice the cap in bytes, whatever the
 * segmenting; the text is decoded once and parsed once, and the SDK is handed the parsed body.
 * @module
 */

/** What reading a body found. */
export type BodyRead =
  | { kind: "json"; body: unknown }
  | { kind: "empty" }
  | { kind: "too_large" }
  | { kind: "unreadable" }
  | { kind: "not_json"; message: string };

const FIRST_BUFFER = 16 * 1024;

/** Reads `request`'s body (at most `maxBytes`) and parses it as JSON. */
export async function readJsonBody(request: Request, maxBytes: number): Promise<BodyRead> {
  const bytes = await readCapped(request, maxBytes);
  if (!(bytes instanceof Uint8Array)) return bytes;
  if (bytes.length === 0) return { kind: "empty" };
  try {
    return { kind: "json", body: JSON.parse(new TextDecoder().decode(bytes)) };
  } catch (error) {
    return { kind: "not_json", message: (error as Error).message };
  }
}

/** The body's bytes, or why there are none: over the cap (read no further), or a broken stream. */
async function readCapped(
  request: Request,
  maxBytes: number,
): Promise<Uint8Array | { kind: "too_large" } | { kind: "unreadable" }> {
  const declared = Number(request.headers.get("content-length") ?? NaN);
  if (declared > maxBytes) return { kind: "too_large" };
  if (request.body === null) return new Uint8Array(0);
  // never released: nothing reads the body again, and a release makes an error (with its stack)
  // for the reader's `closed` promise on every request
  const reader = request.body.getReader();
  let buffer = new Uint8Array(
    Number.isSafeInteger(declared) && declared >= 0 ? declared : Math.min(FIRST_BUFFER, maxBytes),
  );
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return buffer.subarray(0, size);
      if (size + value.length > maxBytes) {
        await reader.cancel().catch(() => {});
        return { kind: "too_large" };
      }
      if (size + value.length > buffer.length) {
        const grown = new Uint8Array(
          Math.min(maxBytes, Math.max(size + value.length, buffer.length * 2)),
        );
        grown.set(buffer.subarray(0, size));
        buffer = grown;
      }
      buffer.set(value, size);
      size += value.length;
    }
  } catch {
    return { kind: "unreadable" };
  }
}
