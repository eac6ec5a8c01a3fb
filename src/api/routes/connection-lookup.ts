// Where a connection of an id is: among the stand's own (read-only, handed in by src/server) first,
// then in the runner's table; and the refusal of a change to one of the stand's own.
import { type ConnectionRecord, ReadOnlyError } from "../../runner/index.ts";
import type { ApiContext } from "../context.ts";

export function readOnlyConnection(connectionId: string): ReadOnlyError {
  return new ReadOnlyError(
    "connection_id",
    `connection '${connectionId}' is read-only: it is one of the stand's own services, from the stand config (stand.yaml); change it there`,
  );
}

export interface ConnectionLookup {
  /** One of the stand's own, if the id is one's. */
  standOne(id: string): ConnectionRecord | undefined;
  /** Throws ConnectionNotFoundError. */
  find(id: string): Promise<ConnectionRecord>;
}

export function connectionLookup({ runner, connections }: Pick<ApiContext, "runner" | "connections">): ConnectionLookup {
  const standOne = (id: string): ConnectionRecord | undefined => {
    const found = connections.readOnly().find((c) => c.connectionId === id);
    return found && { ...found, readOnly: true };
  };
  return { standOne, find: async (id) => standOne(id) ?? runner.getConnection(id) };
}
