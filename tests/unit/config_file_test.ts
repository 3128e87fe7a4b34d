/**
 * `config.json`'s `cost` section: the transcript wait's default, a value taken as written, and a
 * value out of range refused with the file, the key and the allowed keys.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { loadConfig } from "../../config/config_file.ts";
import { TRANSCRIPT_WAIT_MS } from "../../store/transcripts/claude_code.ts";

async function withHome(config: unknown, fn: (home: string) => Promise<void>): Promise<void> {
  const home = await Deno.makeTempDir({ prefix: "waymark-config-" });
  try {
    if (config !== undefined) {
      await Deno.writeTextFile(join(home, "config.json"), JSON.stringify(config));
    }
    await fn(home);
  } finally {
    await Deno.remove(home, { recursive: true });
  }
}

Deno.test("the transcript wait defaults to the meter's own and takes what the file says", async () => {
  await withHome(undefined, async (home) => {
    assert.equal((await loadConfig(home)).cost.transcriptWaitMs, TRANSCRIPT_WAIT_MS);
  });
  await withHome({ cost: { tokenBudget: 10 } }, async (home) => {
    assert.equal((await loadConfig(home)).cost.transcriptWaitMs, TRANSCRIPT_WAIT_MS);
  });
  await withHome({ cost: { transcriptWaitMs: 8_000 } }, async (home) => {
    const { cost } = await loadConfig(home);
    assert.deepEqual(cost, { transcripts: true, tokenBudget: null, transcriptWaitMs: 8_000 });
  });
});

Deno.test("a transcript wait out of range is refused with where it is and what is allowed", async () => {
  for (const bad of [-1, 30_001, 1.5, "2000"]) {
    await withHome({ cost: { transcriptWaitMs: bad } }, async (home) => {
      await assert.rejects(loadConfig(home), (error: Error) => {
        assert.match(error.message, /config\.json: cost\.transcriptWaitMs: /);
        assert.match(error.message, /cost \(\{transcripts, tokenBudget, transcriptWaitMs\}\)/);
        return true;
      });
    });
  }
});
