/**
 * The viewer's lane layout: the preferred branch is a straight lane 0, every fork gets a lane,
 * lanes are reused once a branch ends, and a graph cut by the node cap still lays out.
 */
import assert from "node:assert/strict";
import { layoutRun } from "../../web/layout.ts";

function chain(prefix: string, n: number, from: string | null) {
  const out: { id: string; parentId: string | null }[] = [];
  let parent = from;
  for (let i = 0; i < n; i++) {
    const id = `${prefix}${i}`;
    out.push({ id, parentId: parent });
    parent = id;
  }
  return out;
}

Deno.test("a linear run is one branch in lane 0", () => {
  const nodes = chain("a", 5, null);
  const layout = layoutRun(nodes, "a4");
  assert.equal(layout.laneCount, 1);
  assert.equal(layout.branches.length, 1);
  assert.deepEqual(layout.nodes.map((n) => n.lane), [0, 0, 0, 0, 0]);
  assert.ok(layout.nodes.every((n) => n.preferred && !n.cut));
  assert.ok(layout.edges.every((e) => !e.fork));
});

Deno.test("a fork: the preferred (newest) branch keeps lane 0, the older one moves aside", () => {
  // a0 → a1 → a2 → a3 (old branch), then a rewind to a1: a1 → b0 → b1 (newest: preferred)
  const nodes = [...chain("a", 4, null), ...chain("b", 2, "a1")];
  const layout = layoutRun(nodes, "b1");
  const lane = (id: string) => layout.nodes.find((n) => n.id === id)!.lane;
  assert.equal(lane("a0"), 0);
  assert.equal(lane("a1"), 0);
  assert.equal(lane("b0"), 0);
  assert.equal(lane("b1"), 0);
  assert.equal(lane("a2"), 1);
  assert.equal(lane("a3"), 1);
  assert.equal(layout.laneCount, 2);
  assert.equal(layout.branches.length, 2);
  assert.equal(layout.branches[0]!.preferred, true);
  assert.deepEqual(layout.branches[0]!.nodeIds, ["a0", "a1", "b0", "b1"]);
  assert.deepEqual(layout.branches[1]!.nodeIds, ["a2", "a3"]);
  assert.equal(layout.branches[1]!.forkFromId, "a1");
  const forks = layout.edges.filter((e) => e.fork).map((e) => `${e.from}->${e.to}`);
  assert.deepEqual(forks, ["a1->a2"]);
});

Deno.test("lanes are reused once a side branch has ended, and never overlap", () => {
  // main m0..m9; side branches that end before the next one starts share lane 1
  const nodes = [
    ...chain("m", 3, null),
    ...chain("x", 2, "m1"), // rows 3-4
    ...chain("n", 2, "m2"), // main continues: rows 5-6
    ...chain("y", 2, "n0"), // rows 7-8, starts after x ended
  ];
  const layout = layoutRun(nodes, "n1");
  const lane = (id: string) => layout.nodes.find((n) => n.id === id)!.lane;
  assert.equal(lane("x0"), 1);
  assert.equal(lane("y0"), 1);
  // no two branches in the same lane over overlapping rows
  const spans = layout.branches.map((b) => {
    const rows = b.nodeIds.map((id) => layout.nodes.find((n) => n.id === id)!.row);
    const start = b.forkFromId === null
      ? Math.min(...rows)
      : layout.nodes.find((n) => n.id === b.forkFromId)!.row + 1;
    return { lane: b.lane, start, end: Math.max(...rows) };
  });
  for (const a of spans) {
    for (const b of spans) {
      if (a === b || a.lane !== b.lane) continue;
      assert.ok(a.end < b.start || b.end < a.start, `overlap in lane ${a.lane}`);
    }
  }
});

Deno.test("twenty forks off one line each get a branch; the preferred path stays straight", () => {
  const main = chain("m", 60, null);
  const nodes = [...main];
  for (let k = 0; k < 20; k++) nodes.push(...chain(`f${k}_`, 3, `m${k * 3}`));
  const tip = "f19_2";
  const layout = layoutRun(nodes, tip);
  assert.equal(layout.branches.length, 21);
  const preferred = layout.nodes.filter((n) => n.preferred);
  assert.ok(preferred.every((n) => n.lane === 0));
  assert.ok(preferred.some((n) => n.id === tip));
});

Deno.test("nodes whose parent was cut off by the cap start their own branch, marked cut", () => {
  const nodes = [{ id: "c5", parentId: "c4" }, { id: "c6", parentId: "c5" }];
  const layout = layoutRun(nodes, "c6");
  assert.equal(layout.nodes[0]!.cut, true);
  assert.equal(layout.nodes[1]!.cut, false);
  assert.equal(layout.branches.length, 1);
  assert.equal(layout.edges.length, 1);
});

Deno.test("rows are depth first: a late rewind's branch sits under its fork point, lanes stay few", () => {
  // a long main line, then 20 rewinds made at the end, each off a different early node
  const main = chain("m", 200, null);
  const nodes = [...main];
  for (let k = 0; k < 20; k++) nodes.push(...chain(`f${k}_`, 5, `m${k * 9 + 3}`));
  const layout = layoutRun(nodes, "m199");
  const row = (id: string) => layout.nodes.find((n) => n.id === id)!.row;
  for (let k = 0; k < 20; k++) {
    assert.equal(row(`f${k}_0`), row(`m${k * 9 + 3}`) + 1, `fork ${k} right under its fork point`);
  }
  assert.equal(row("m199"), nodes.length - 1, "the preferred tip is the last row");
  assert.ok(layout.laneCount <= 2, `lanes: ${layout.laneCount}`);
  const rows = layout.nodes.map((n) => n.row).sort((a, b) => a - b);
  assert.deepEqual(rows, nodes.map((_, i) => i), "every row used once");
});

Deno.test("a fork's side branches come before its continuation; a deep chain needs no recursion", () => {
  const nodes = [...chain("a", 4, null), ...chain("b", 2, "a1")];
  const layout = layoutRun(nodes, "b1");
  const order = [...layout.nodes].sort((x, y) => x.row - y.row).map((n) => n.id);
  assert.deepEqual(order, ["a0", "a1", "a2", "a3", "b0", "b1"]);
  const deep = layoutRun(chain("d", 50_000, null), "d49999");
  assert.equal(deep.nodes[49_999]!.row, 49_999);
});
