/**
 * What nothing classified is a fault in waymark's own code: the same call meets it again, so it is
 * never offered as retryable; a busy store is.
 */
import assert from "node:assert/strict";
import { guard } from "../../engine/run/error_guard.ts";
import { StorageBusyError } from "../../engine/model/result.ts";

Deno.test("an unclassified failure is INTERNAL_ERROR and not retryable; a busy store says when to retry", async () => {
  const thrown = await guard(() => Promise.reject(new Error("too many SQL variables")));
  assert.equal(thrown.ok, false);
  if (thrown.ok) return;
  assert.equal(thrown.error.code, "INTERNAL_ERROR");
  assert.equal(thrown.error.retry.kind, "not_retryable");
  assert.match(thrown.error.message, /too many SQL variables/);
  assert.doesNotMatch(thrown.error.message, /retrying is safe/i);
  const busy = await guard(() => Promise.reject(new StorageBusyError("locked")));
  assert.equal(!busy.ok && busy.error.retry.kind, "retryable_after_ms");
});
