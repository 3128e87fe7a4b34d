/**
 * The store matrix on PostgreSQL: corruption, `kill -9` mid-advance, gc beside a live server,
 * doctor and the evidence it keeps, the same suites as on libSQL files, here with every home's
 * database on the run's PostgreSQL server (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../integration/corruption_test.ts");
  await import("../integration/crash_test.ts");
  await import("../integration/gc_test.ts");
  await import("../integration/log_gaps_test.ts");
  await import("../integration/doctor_damage_test.ts");
}
