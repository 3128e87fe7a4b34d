/**
 * The store matrix on PostgreSQL: walks, replays, forks, rehydration, blocked attempts, checkpoints
 * and gates with assessments, the same suites as on libSQL files, here with every home's database
 * on the run's PostgreSQL server (`tests/helpers/postgres.ts`).
 * @module
 */
import { postgresTestable, testOnPostgres } from "../helpers/postgres.ts";

if (postgresTestable()) {
  testOnPostgres();
  await import("../integration/mcp_walk_test.ts");
  await import("../integration/enforcement_test.ts");
  await import("../integration/gates_mcp_test.ts");
}
