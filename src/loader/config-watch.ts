// Watches the stand config file for the loader's hot reload. The file's directory is watched, not
// the file: an editor that saves by writing a new file and renaming it over the old one (vim, most
// IDEs, `sed -i`) replaces the inode a watch on the file would hold, and that watch would go deaf.
// Events come in bursts (a rename, then writes), so they are debounced: one reload per quiet moment.
import { watch, watchFile, unwatchFile, type FSWatcher, type Stats } from "node:fs";
import path from "node:path";
import { errorMessage } from "../errors.ts";

export const CONFIG_WATCH_DEBOUNCE_MS = 200;
/** How often the file is polled when its directory cannot be watched. */
const POLL_INTERVAL_MS = 1000;

export interface ConfigWatch {
  close(): void;
}

export interface ConfigWatchOptions {
  debounceMs?: number;
  /** Told when the directory watch failed and the file is polled instead. */
  warn?: (line: string) => void;
}

/** Calls `changed` once the file has been quiet for debounceMs after it was written, replaced, created or removed. */
export function watchConfigFile(file: string, changed: () => void, options: ConfigWatchOptions = {}): ConfigWatch {
  const dir = path.dirname(file);
  const name = path.basename(file);
  const debounceMs = options.debounceMs ?? CONFIG_WATCH_DEBOUNCE_MS;
  let timer: NodeJS.Timeout | undefined;
  let closed = false;
  let watcher: FSWatcher | undefined;
  let polling = false;

  const touched = (): void => {
    if (closed) return;
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      timer = undefined;
      if (!closed) changed();
    }, debounceMs);
    timer.unref();
  };

  const polled = (now: Stats, before: Stats): void => {
    if (now.mtimeMs !== before.mtimeMs || now.ino !== before.ino || now.size !== before.size) touched();
  };

  const poll = (why: string): void => {
    options.warn?.(`watching ${dir} for changes of ${name} failed (${why}); polling ${file} every ${POLL_INTERVAL_MS} ms instead`);
    watcher?.close();
    watcher = undefined;
    if (closed || polling) return;
    polling = true;
    watchFile(file, { interval: POLL_INTERVAL_MS, persistent: false }, polled);
  };

  try {
    // filename null: the platform did not say which file; read it again rather than miss a change
    watcher = watch(dir, { persistent: false }, (_event, filename) => {
      if (filename === null || filename === name) touched();
    });
    watcher.on("error", (err) => poll(errorMessage(err)));
  } catch (err) {
    poll(errorMessage(err));
  }

  return {
    close() {
      closed = true;
      if (timer !== undefined) clearTimeout(timer);
      watcher?.close();
      if (polling) unwatchFile(file, polled);
    },
  };
}
