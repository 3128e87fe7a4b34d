/**
 * The store matrix on PostgreSQL: the viewer and the delegation tree in headless Chromium, the same
 * suites as on libSQL files, here with every home's database on the run's PostgreSQL server
 * (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../browser/viewer_browser_test.ts");
  await import("../browser/delegation_browser_test.ts");
}
