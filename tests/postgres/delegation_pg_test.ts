/**
 * The store matrix on PostgreSQL: a delegation tree in a bundle, and child runs where runs are
 * looked for, the same suites as on libSQL files, here with every home's database on the run's
 * PostgreSQL server (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../integration/delegation_bundle_test.ts");
  await import("../integration/delegation_surfaces_test.ts");
}
