/**
 * Agent-written Markdown renders without any way to run script: raw HTML is escaped, dangerous
 * link schemes are refused, images are off, and links get rel="noopener noreferrer nofollow".
 */
import assert from "node:assert/strict";
import { renderMarkdown, renderMarkdownBounded } from "../../web/markdown.ts";

const HOSTILE = [
  "<script>alert(1)</script>",
  "<img src=x onerror=alert(1)>",
  '<a href="javascript:alert(1)" onclick="alert(2)">x</a>',
  "[a](javascript:alert(1))",
  "[b](JaVaScRiPt:alert(1))",
  "[c](jav&#x61;script:alert(1))",
  "[d](vbscript:msgbox(1))",
  "[e](data:text/html,<script>alert(1)</script>)",
  "<svg onload=alert(1)>",
  "<iframe src=javascript:alert(1)>",
  "<details open ontoggle=alert(1)>",
  "![pixel](https://tracker.example/p.gif)",
  "<style>body{display:none}</style>",
];

Deno.test("raw HTML, script links, event attributes and images never come through", () => {
  for (const text of HOSTILE) {
    const html = renderMarkdown(text);
    assert.doesNotMatch(html, /<(script|img|iframe|svg|details|style)\b/i, `${text} → ${html}`);
    assert.doesNotMatch(html, /href="\s*(javascript|vbscript|data):/i, `${text} → ${html}`);
    assert.doesNotMatch(html, /<[^>]+\son\w+=/i, `${text} → ${html}`);
  }
});

Deno.test("ordinary Markdown renders, and links carry rel noopener noreferrer nofollow", () => {
  const html = renderMarkdown(
    "## Findings\n\n- **major**: `retry()` loops\n\nSee [the PR](https://example.com/pr/1) or https://example.com/x",
  );
  assert.match(html, /<h2>Findings<\/h2>/);
  assert.match(html, /<strong>major<\/strong>/);
  assert.match(html, /<code>retry\(\)<\/code>/);
  assert.match(
    html,
    /<a href="https:\/\/example.com\/pr\/1" rel="noopener noreferrer nofollow">the PR<\/a>/,
  );
  assert.match(html, /<a href="https:\/\/example.com\/x" rel="noopener noreferrer nofollow">/);
});

Deno.test("very long notes are cut before rendering, and say so", () => {
  const html = renderMarkdownBounded("x".repeat(50), 10);
  assert.match(html, /40 more characters not shown/);
});
