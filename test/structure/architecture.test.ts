// docs/architecture.md is the map of the rooms: it must name every room folder there is, no folder
// that is gone, each room's door, and the arrows the code really draws between rooms. The rooms
// eslint guards (ROOMS in eslint.config.js) are the map's rooms with a door.
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { describe, it } from "node:test";
import { repoRoot } from "../../src/config/stand.ts";
import { ROOMS } from "../../eslint.config.js";

interface MapRow {
  room: string;
  imports: string[];
}

/** The rows of the map's table: the room in the first cell, the rooms it imports in the last. */
function readMap(): MapRow[] {
  const text = readFileSync(path.join(repoRoot, "docs/architecture.md"), "utf8");
  const rows: MapRow[] = [];
  for (const line of text.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    if (cells.length < 5 || !cells[1]?.startsWith("`")) continue;
    const room = cells[1].replace(/`/g, "");
    const last = cells[cells.length - 2] ?? "";
    rows.push({ room, imports: last === "—" ? [] : [...last.matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "") });
  }
  return rows;
}

/** The room folders on disk: every folder of src/ (and its single-file rooms), and the product's top-level code folders. */
function roomsOnDisk(): string[] {
  const src = readdirSync(path.join(repoRoot, "src")).flatMap((name) => {
    const full = path.join(repoRoot, "src", name);
    if (statSync(full).isDirectory()) return [`src/${name}`];
    return name.endsWith(".ts") ? [`src/${name}`] : [];
  });
  return [...src, "generator/src", "tasks", "dags", "testkit", "bench", "scripts"].sort();
}

function tsFiles(dir: string): string[] {
  return readdirSync(path.join(repoRoot, dir), { withFileTypes: true }).flatMap((entry) => {
    const rel = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : tsFiles(rel);
    return entry.name.endsWith(".ts") ? [rel] : [];
  });
}

function roomOf(file: string, rooms: readonly string[]): string | undefined {
  return [...rooms].sort((a, b) => b.length - a.length).find((r) => file === r || file.startsWith(`${r}/`));
}

/** Which rooms each room's code imports, read from its import statements. */
function arrowsInCode(rooms: readonly string[]): Map<string, Set<string>> {
  const arrows = new Map(rooms.map((r) => [r, new Set<string>()]));
  for (const room of rooms) {
    const files = room.endsWith(".ts") ? [room] : tsFiles(room);
    for (const file of files) {
      for (const m of readFileSync(path.join(repoRoot, file), "utf8").matchAll(/from "(\.{1,2}\/[^"]+)"/g)) {
        const target = path.normalize(path.join(path.dirname(file), m[1] ?? ""));
        const to = roomOf(target, rooms);
        if (to !== undefined && to !== room) arrows.get(room)?.add(to);
      }
    }
  }
  return arrows;
}

describe("the map of the rooms (docs/architecture.md)", () => {
  const map = readMap();
  const mapped = map.map((r) => r.room);

  it("names every room folder there is, and none that is gone", () => {
    assert.ok(map.length > 10, "the map's table was read");
    const onDisk = roomsOnDisk();
    const unnamed = onDisk.filter((r) => !mapped.includes(r));
    assert.deepEqual(unnamed, [], `rooms the map does not name: ${unnamed.join(", ")}; add a row to docs/architecture.md saying what each owns`);
    const gone = mapped.filter((r) => !existsSync(path.join(repoRoot, r)));
    assert.deepEqual(gone, [], `the map names rooms that are gone: ${gone.join(", ")}`);
  });

  it("gives each room eslint guards a door, and eslint guards every room with a door", () => {
    for (const room of ROOMS) {
      assert.ok(mapped.includes(room), `${room} is in eslint.config.js's ROOMS but not on the map`);
      assert.ok(existsSync(path.join(repoRoot, room, "index.ts")), `${room} has no door (${room}/index.ts)`);
    }
    const doorless = mapped.filter((r) => !r.endsWith(".ts") && !ROOMS.includes(r) && !["bench", "scripts"].includes(r));
    assert.deepEqual(doorless, [], `rooms on the map that eslint does not guard: ${doorless.join(", ")}; add them to ROOMS`);
  });

  it("draws the arrows the code draws, all pointing down the table", () => {
    const code = arrowsInCode(mapped);
    for (const [i, row] of map.entries()) {
      const drawn = [...(code.get(row.room) ?? [])].sort();
      assert.deepEqual(drawn, [...row.imports].sort(), `${row.room}: the code imports ${drawn.join(", ") || "nothing"}; the map says ${row.imports.join(", ") || "nothing"}`);
      for (const to of drawn) {
        assert.ok(mapped.indexOf(to) < i, `${row.room} imports ${to}, which stands above it on the map: an arrow that climbs`);
      }
    }
  });
});
