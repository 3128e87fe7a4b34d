import assert from "node:assert/strict";
import { LineSplitter, type OversizeLine } from "../../tools/stdio/line_splitter.ts";

function collect(limit: number, chunks: (string | Uint8Array)[], end = false) {
  const lines: string[] = [];
  const oversize: OversizeLine[] = [];
  const splitter = new LineSplitter(limit, {
    line: (text) => lines.push(text),
    oversize: (line) => oversize.push(line),
  });
  for (const c of chunks) splitter.push(typeof c === "string" ? new TextEncoder().encode(c) : c);
  if (end) splitter.end();
  return { lines, oversize };
}

Deno.test("line splitter: lines across chunks, CRLF, and a multi-byte character split in two", () => {
  const euro = new TextEncoder().encode("€"); // 3 bytes
  const { lines } = collect(100, [
    "a\nb",
    "c\r\n",
    euro.subarray(0, 1),
    euro.subarray(1),
    "\n\nlast-without-newline",
  ]);
  assert.deepEqual(lines, ["a", "bc", "€"]);
  const ended = collect(100, ["a\n", "last-without-newline"], true);
  assert.deepEqual(ended.lines, ["a", "last-without-newline"], "the end of input ends the line");
});

Deno.test("line splitter: an oversize line is reported once with its id, then lines flow again", () => {
  const big = `{"jsonrpc":"2.0","method":"ping","params":{"q":"${"x".repeat(50)}"},"id":7}`;
  const { lines, oversize } = collect(40, [big.slice(0, 30), big.slice(30), "\n", "ok\n"]);
  assert.deepEqual(oversize, [{ bytes: big.length, id: 7 }]);
  assert.deepEqual(lines, ["ok"]);
  const first = collect(20, [`{"jsonrpc":"2.0","id":"abc","method":"${"y".repeat(40)}"}\n`]);
  assert.equal(first.oversize[0]!.id, "abc");
  const junk = collect(10, ["z".repeat(100)], true);
  assert.deepEqual(junk.oversize, [{ bytes: 100, id: null }]);
});

Deno.test("line splitter: exactly at the cap passes; one byte over does not", () => {
  assert.deepEqual(collect(5, ["12345\n"]).lines, ["12345"]);
  assert.equal(collect(5, ["123456\n"]).oversize.length, 1);
});
