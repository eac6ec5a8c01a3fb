// Favourite DAGs per user (000026_dag_favorites.sql), as Airflow 3's DagFavorite: marking a DAG a
// favourite twice, or unmarking one that is not, is a conflict (409 there and here), not a no-op.
// Who the user is, is the API's to say; the engine keeps the pairs.
import type pg from "pg";
import { query, queryOne, statement } from "./db.ts";
import { DagNotFoundError, PG_ERROR, RunnerError } from "./errors.ts";
import { errorCode } from "../errors.ts";

export class DagAlreadyFavoriteError extends RunnerError {
  constructor(readonly dagId: string, readonly user: string) {
    super(`DAG '${dagId}' is already a favourite of ${user}`);
  }
}

export class DagNotFavoriteError extends RunnerError {
  constructor(readonly dagId: string, readonly user: string) {
    super(`DAG '${dagId}' is not marked as favourite by ${user}`);
  }
}

const ADD = statement("add_dag_favorite", "insert into runner.dag_favorites (dag_id, user_name) values ($1, $2) on conflict do nothing returning dag_id");
const REMOVE = statement("remove_dag_favorite", "delete from runner.dag_favorites where dag_id = $1 and user_name = $2 returning dag_id");
const OF_USER = statement("dag_favorites_of_user", "select dag_id from runner.dag_favorites where user_name = $1");

/** Throws DagAlreadyFavoriteError when it already was, DagNotFoundError when runner.dags has no such DAG. */
export async function addDagFavorite(pool: pg.Pool, dagId: string, user: string): Promise<void> {
  const row = await queryOne<{ dag_id: string }>(pool, ADD, [dagId, user]).catch((err: unknown) => {
    // the DAG was deleted since the caller looked it up
    throw errorCode(err) === PG_ERROR.FOREIGN_KEY_VIOLATION ? new DagNotFoundError(dagId) : err;
  });
  if (!row) throw new DagAlreadyFavoriteError(dagId, user);
}

/** Throws DagNotFavoriteError when it was not one. */
export async function removeDagFavorite(pool: pg.Pool, dagId: string, user: string): Promise<void> {
  const row = await queryOne<{ dag_id: string }>(pool, REMOVE, [dagId, user]);
  if (!row) throw new DagNotFavoriteError(dagId, user);
}

export async function readDagFavorites(pool: pg.Pool, user: string): Promise<Set<string>> {
  return new Set((await query<{ dag_id: string }>(pool, OF_USER, [user])).map((r) => r.dag_id));
}
