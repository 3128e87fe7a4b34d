/**
 * The store matrix on PostgreSQL: runs as MCP tasks (the extension, the legacy surface, progress)
 * and elicitation, the same suites as on libSQL files, here with every home's database on the run's
 * PostgreSQL server (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../integration/tasks_extension_test.ts");
  await import("../integration/tasks_legacy_test.ts");
  await import("../integration/tasks_progress_test.ts");
  await import("../integration/elicitation_test.ts");
}
