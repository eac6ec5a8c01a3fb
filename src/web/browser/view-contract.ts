// Node-side check (root tsconfig; left out of this folder's browser tsconfig): the view models the
// server answers as each page's JSON twin (src/web/pages) still fit what the page script reads
// (views.ts). A renamed or retyped field fails `make typecheck` here instead of breaking the
// live refresh in the browser. Types only: nothing here runs.
import type { DagListView } from "../pages/dag-list.ts";
import type { GridView } from "../pages/dag-grid.ts";
import type { RunView } from "../pages/run-view.ts";
import type { WorldView } from "../pages/world-view.ts";
import type * as Browser from "./views.ts";

/** Compiles only when Server is assignable to Browser. */
type Fits<BrowserView, _ServerView extends BrowserView> = true;

export type ViewContract = [
  Fits<Browser.DagListView, DagListView>,
  Fits<Browser.GridView, GridView>,
  Fits<Browser.RunView, RunView>,
  Fits<Browser.RefreshedView, DagListView | GridView | RunView | WorldView>,
];
