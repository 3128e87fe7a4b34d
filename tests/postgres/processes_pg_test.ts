/**
 * The store matrix on PostgreSQL: resume ranking after a killed process, four server processes
 * racing one advance (with the same notes and with different ones), and three subagents' servers
 * driving children at once (suites whose servers are processes), the same suites as on libSQL
 * files, here with every home's database on the run's PostgreSQL server
 * (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../integration/resume_test.ts");
  await import("../integration/race_test.ts");
  await import("../integration/delegation_test.ts");
  await import("../integration/replay_payload_test.ts");
}
