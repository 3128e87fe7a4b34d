/**
 * Real Claude Code against waymark as a team service: `serve --http` with authentication, reached
 * over HTTP with a personal access token in a header (added with the host's own `claude mcp add`),
 * walks a bundled workflow to completion; the service records the token's principal as the one
 * who started the run and acknowledged its steps.
 * @module
 */
import assert from "node:assert/strict";
import { startAuthService } from "../helpers/auth_service.ts";
import { hostTestOptions } from "../helpers/hosts.ts";
import { addHttpServer, hostPlace, runClaude } from "../helpers/host_run.ts";
import { runCli } from "../helpers/maintenance.ts";
import { serveAnthropic } from "../helpers/model/anthropic_api.ts";
import { DONE } from "../helpers/model/diligent.ts";

const WORKFLOW = "waymark.docs_update";

Deno.test({
  name: "Claude Code walks a workflow on the authenticated service with a personal access token",
  ...hostTestOptions("claude"),
  fn: async () => {
    const service = await startAuthService();
    const place = await hostPlace();
    const model = serveAnthropic();
    try {
      const token = await service.pat("claude-on-ci", ["--bot"]);
      await addHttpServer(place, service.url, token);
      const out = await runClaude(place, {
        prompt: `Run the waymark workflow \`${WORKFLOW}\` to completion.`,
        modelUrl: model.url,
      });
      assert.equal(out.code, 0, `claude exited ${out.code}: ${out.stderr.slice(-800)}`);
      const result = JSON.parse(out.stdout.trim().split("\n").at(-1)!);
      assert.ok(
        String(result.result).includes(DONE),
        `${String(result.result).slice(0, 400)}\nthe service said: ${
          service.server.stderr().slice(-1500)
        }`,
      );

      const listed = await runCli(["sessions", "list", "--json"], { home: service.home.home });
      assert.equal(listed.code, 0, listed.err);
      const sessions = JSON.parse(listed.out).sessions ?? JSON.parse(listed.out);
      assert.equal(sessions.length, 1, listed.out);
      const shown = await runCli(["sessions", "show", sessions[0].sessionId, "--json"], {
        home: service.home.home,
      });
      assert.equal(shown.code, 0, shown.err);
      const [run] = JSON.parse(shown.out).runs;
      assert.equal(run.workflowId, WORKFLOW);
      assert.equal(run.status, "complete");
      assert.equal(run.startedBy?.displayName, "claude-on-ci");
      assert.equal(run.startedBy?.kind, "bot");
      assert.deepEqual(
        run.acknowledgedBy.map((a: { displayName: string }) => a.displayName),
        ["claude-on-ci"],
      );
      const { stderr } = await service.stop();
      assert.ok(!stderr.includes(token.slice(-20)), "the token reached the service's log");
    } finally {
      await model.close();
      await place.cleanup();
      await service.stop().catch(() => {});
    }
  },
});
