// The JSON the page script reads: the parts of each page's view model (GET /ui/data/...) and of
// the page actions' answers that the renderers use. The server's own types (src/web/pages) are
// Node code; view-contract.ts checks, in the Node typecheck, that they still fit these. A shape the
// server's view has exactly as the script reads it (LogView) is declared here only, and the server
// takes it from here (types only, no imports here, so it stays Node-free).

export interface PageInfo {
  offset: number;
  limit: number;
  total: number;
}

export interface RunSquareView {
  runId: string;
  state: string;
  href: string;
  title: string;
}

export interface DagControlsView {
  dagId: string;
  isPaused: boolean;
}

export interface DagListRowView extends DagControlsView {
  recentRuns: RunSquareView[];
  totalRuns: number;
}

export interface DagListView {
  dags: DagListRowView[];
  active: boolean;
}

export interface GridCellView {
  /** null: the run declares no such task. */
  state: string | null;
  href: string;
  title: string;
}

export interface GridRunView extends RunSquareView {
  label: string;
  /** "v3": the DAG version the run was made from; null for a run older than versions. */
  version: string | null;
  /** One per task row, in the order of GridView.taskIds. */
  cells: GridCellView[];
}

export interface GridView {
  dag: DagControlsView;
  taskIds: string[];
  runs: GridRunView[];
  active: boolean;
}

export interface RunLinkView {
  dagId: string;
  runId: string;
  href: string;
}

export interface TaskRowView {
  taskId: string;
  state: string;
  tryNumber: number;
  maxTries: number;
  duration: string;
  bar: { x: number; width: number } | null;
  error: string | null;
  child: RunLinkView | null;
  href: string;
  selected: boolean;
}

export interface LogView {
  taskId: string;
  tryNumber: number;
  tries: { tryNumber: number; href: string; selected: boolean }[];
  lines: { at: string; level: string; message: string }[];
  page: PageInfo;
}

export interface RunView {
  run: { state: string; startDate: string | null; endDate: string | null; duration: string; waitingFor: string | null };
  axis: { ticks: { label: string }[] };
  tasks: TaskRowView[];
  log: LogView | null;
  active: boolean;
}

/** What every refreshed page's JSON twin has. */
export interface RefreshedView {
  active: boolean;
}

/** POST /ui/actions/dags/{dag_id}/trigger. */
export interface TriggerAnswer {
  dag_run_id: string;
  href: string;
}

/** POST /ui/actions/dags/{dag_id}/runs/{run_id}/state and …/clear. */
export interface RunActionAnswer {
  dag_run_id: string;
  message: string;
}

/** POST /ui/actions/dags/{dag_id}/pause. */
export interface PauseAnswer {
  is_paused: boolean;
}

/** Problem JSON, as every action error answers. */
export interface ProblemAnswer {
  detail?: string;
  field?: string;
}
