/**
 * The store matrix on PostgreSQL: session bundles, over MCP and from the CLI, the same suites as on
 * libSQL files, here with every home's database on the run's PostgreSQL server
 * (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../integration/bundle_test.ts");
  await import("../integration/bundle_cli_test.ts");
}
