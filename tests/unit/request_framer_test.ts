/** The request framer the deadline listener times requests with: phases byte by byte. */
import assert from "node:assert/strict";
import { RequestFramer } from "../../web/request_framer.ts";

/** The phase after each byte of `text`, fed one byte at a time. */
function phases(text: string, maxHead = 1024): string {
  const framer = new RequestFramer(maxHead);
  let out = "";
  for (const byte of new TextEncoder().encode(text)) {
    const error = framer.push(new Uint8Array([byte]));
    if (error) return `${out}!${error}`;
    out += framer.phase[0];
  }
  return out;
}

Deno.test("framer: headers, a Content-Length body, then idle; blank lines between requests", () => {
  const head = "POST / HTTP/1.1\r\nContent-Length: 3\r\n\r\n";
  assert.equal(phases(`${head}abc`), `${"h".repeat(head.length - 1)}bbbi`);
  const get = "GET / HTTP/1.1\r\nHost: x\r\n\r\n";
  assert.equal(phases(`\r\n${get}`), `ii${"h".repeat(get.length - 1)}i`);
});

Deno.test("framer: chunked bodies with extensions and trailers end where they end", () => {
  const framer = new RequestFramer(1024);
  const text = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n" +
    "3;ext=1\r\nabc\r\nA\r\n0123456789\r\n0\r\nTrailer: yes\r\n\r\nGET / HTTP/1.1\r\n\r\n";
  // any split gives the same end state
  for (const size of [1, 2, 7, text.length]) {
    const bytes = new TextEncoder().encode(text);
    for (let at = 0; at < bytes.length; at += size) {
      assert.equal(framer.push(bytes.subarray(at, at + size)), null);
    }
    assert.equal(framer.phase, "idle");
  }
  assert.equal(framer.started, 8);
});

Deno.test("framer: a header block over the cap, and what is not HTTP/1.x, are refused", () => {
  assert.match(phases(`GET / HTTP/1.1\r\nX: ${"a".repeat(100)}\r\n\r\n`, 64), /!header_too_large$/);
  assert.match(phases("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"), /!bad_request$/);
  assert.match(phases("POST / HTTP/1.1\r\nContent-Length: x\r\n\r\n"), /!bad_request$/);
  const chunked = "POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n";
  assert.match(phases(chunked), /!bad_request$/);
});
