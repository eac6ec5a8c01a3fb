// The web view under test: the real engine on a fresh database (runner test helpers), the API app
// (which mounts the web router) on an ephemeral 127.0.0.1 port, and Debian's Chromium driven by
// playwright-core with a fresh profile. Screenshots go to test-output/web/ (git-ignored).
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import type { BrowserContext, Page } from "playwright-core";
import type { Runner } from "../../src/runner/runner.ts";
import { startApi } from "../api/harness.ts";
import type { ApiHarness } from "../api/harness.ts";
import { createTestDatabase, startRunner } from "../runner/helpers.ts";
import type { TestDatabase } from "../runner/helpers.ts";
import { webDags } from "./webDags.ts";

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
  db: TestDatabase;
  runner: Runner;
  api: ApiHarness;
  baseUrl: string;
  browser: BrowserContext;
  /** A fresh tab that fails the test on any page error or console error. */
  newPage(): Promise<Page>;
  /** Page errors and console errors seen in any tab (CSP violations are console errors). */
  readonly pageProblems: string[];
  screenshot(page: Page, name: string): Promise<void>;
  stop(): Promise<void>;
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

export async function startWebStand(): Promise<WebStand> {
  const db = await createTestDatabase();
  const runner = await startRunner(db, webDags, { concurrency: 4, leaseSeconds: 5 });
  const api = await startApi(runner, runner.metrics);
  const chrome = await launchChromium();
  await mkdir(SCREENSHOT_DIR, { recursive: true });
  const pageProblems: string[] = [];
  return {
    db,
    runner,
    api,
    baseUrl: api.baseUrl,
    browser: chrome.browser,
    pageProblems,
    async newPage() {
      const page = await chrome.browser.newPage();
      page.on("pageerror", (err) => pageProblems.push(`pageerror: ${err.message}`));
      page.on("console", (message) => {
        if (message.type() === "error") pageProblems.push(`console: ${message.text()}`);
      });
      return page;
    },
    async screenshot(page, name) {
      await page.screenshot({ path: path.join(SCREENSHOT_DIR, `${name}.png`), fullPage: true });
    },
    async stop() {
      try {
        await chrome.close();
        await api.close();
        await runner.stop();
      } finally {
        await db.drop();
      }
    },
  };
}
