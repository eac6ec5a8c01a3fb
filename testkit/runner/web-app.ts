// The web view under test: the real engine on a fresh database (useTestRunner), the API app
// (which mounts the web router) on an ephemeral 127.0.0.1 port, and Debian's Chromium driven by
// playwright-core with a fresh profile. Screenshots go to test-output/web/ (git-ignored).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { before } from "node:test";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import type { Runner } from "../../src/runner/index.ts";
import { startApi, type ApiHarness } from "./api-app.ts";
import { useTestRunner, type TestDatabase } from "./runner-db.ts";
import { webDags } from "./web-dags.ts";

export const CHROMIUM_PATH = "/usr/bin/chromium";
// Without the background-networking flags Chromium dials out at start, and this machine's closed
// network refuses those connections.
export const CHROMIUM_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
export const SCREENSHOT_DIR = path.resolve(import.meta.dirname, "../../test-output/web");

export interface WebStand {
  readonly db: TestDatabase;
  readonly runner: Runner;
  readonly api: ApiHarness;
  readonly baseUrl: string;
  readonly browser: BrowserContext;
  /** A fresh tab that fails the test on any page error or console error. */
  newPage(): Promise<Page>;
  /** Page errors and console errors seen in any tab (CSP violations are console errors). */
  readonly pageProblems: string[];
  screenshot(page: Page, name: string): Promise<void>;
}

export async function launchChromium(): Promise<{ browser: BrowserContext; close(): Promise<void> }> {
  const profile = await mkdtemp(path.join(os.tmpdir(), "web-test-chromium-"));
  const browser = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    browser,
    async close() {
      await browser.close();
      await rm(profile, { recursive: true, force: true });
    },
  };
}

/**
 * The web stand for the enclosing suite: its `before` starts the engine (useTestRunner), the app and
 * Chromium; its `after` closes Chromium and the app, then stops the engine and drops its database.
 * The fields are live inside hooks and tests; a suite's own `before` placed after this call sees them.
 */
export function useWebStand(): WebStand {
  let api: ApiHarness | undefined;
  let chrome: Awaited<ReturnType<typeof launchChromium>> | undefined;
  const engine = useTestRunner(webDags, {
    beforeStop: async () => {
      await chrome?.close();
      await api?.close();
    },
  });
  before(async () => {
    api = await startApi(engine.runner, engine.runner.metrics);
    chrome = await launchChromium();
    await mkdir(SCREENSHOT_DIR, { recursive: true });
  });
  const started = <T>(value: T | undefined, what: string): T => {
    if (value === undefined) throw new Error(`useWebStand: ${what} starts in before(); use it inside hooks and tests`);
    return value;
  };
  const pageProblems: string[] = [];
  return {
    get db() {
      return engine.db;
    },
    get runner() {
      return engine.runner;
    },
    get api() {
      return started(api, "the app");
    },
    get baseUrl() {
      return started(api, "the app").baseUrl;
    },
    get browser() {
      return started(chrome, "Chromium").browser;
    },
    pageProblems,
    async newPage() {
      const page = await started(chrome, "Chromium").browser.newPage();
      page.on("pageerror", (err) => pageProblems.push(`pageerror: ${err.message}`));
      page.on("console", (message) => {
        if (message.type() === "error") pageProblems.push(`console: ${message.text()}`);
      });
      return page;
    },
    async screenshot(page, name) {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
  };
}
