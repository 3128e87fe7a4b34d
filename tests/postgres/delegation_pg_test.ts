/**
 * The store matrix on PostgreSQL: delegation: three subagents at once, a bundle of the tree, resume
 * and tasks of children, the same suites as on libSQL files, here with every home's database on the
 * run's PostgreSQL server (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../integration/delegation_test.ts");
  await import("../integration/delegation_bundle_test.ts");
  await import("../integration/delegation_surfaces_test.ts");
}
