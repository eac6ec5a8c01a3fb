// Every DAG the runner loads. A DAG module lives in dags/ and default-exports a built Dag;
// list it here (the registry rejects duplicate ids and waiting triggers naming unknown DAGs).
import type { Dag } from "../src/runner/dag.ts";
import exampleHello from "./example_hello.ts";

export const dags: readonly Dag[] = [exampleHello];
