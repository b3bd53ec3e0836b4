// bench/page_latency.mjs BASE_URL [QUERIES] — keystroke to painted results on the search page,
// in Debian's chromium (playwright-core from tests/clients, scripts/install-test-clients.sh).
// Each query of QUERIES (default bench/queries.txt) is typed as a person types it (60 ms a
// key); the page records, per search it draws, the time from the keystroke that started it to
// the frame after its results were painted (window.quarryTimings, the Performance API's clock).
// Prints every query's final time and p50/p95 over them as JSON. bench/page.sh runs it.
import { createRequire } from "node:module";
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const require = createRequire(path.join(here, "../tests/clients/package.json"));
const { chromium } = require("playwright-core");
const [base, queriesFile = path.join(here, "queries.txt")] = process.argv.slice(2);
const queries = readFileSync(queriesFile, "utf8").split("\n").map((l) => l.trim()).filter(Boolean);

const browser = await chromium.launch({ executablePath: process.env.QUARRY_CHROMIUM || "/usr/bin/chromium", args: ["--no-sandbox"] });
const page = await browser.newPage();
const rows = [];
// One warm-up query: the first load of the page and of the server's caches is not what a
// person typing feels.
for (const [i, q] of [queries[0], ...queries].entries()) {
  await page.goto(base + "/");
  await page.click("#q");
  await page.keyboard.type(q, { delay: 60 });
  await page.waitForSelector(`#main[data-query="${q.replace(/"/g, '\\"')}"]`, { timeout: 30000 });
  await page.waitForFunction(() => window.quarryTimings.length > 0);
  const timings = await page.evaluate(() => window.quarryTimings);
  const fetches = await page.evaluate(() => window.quarryFetchTimings);
  const files = await page.$$eval(".file-group h2 a", (as) => as.length);
  if (i > 0) rows.push({ query: q, final_ms: +timings[timings.length - 1].toFixed(1), server_ms: +fetches[fetches.length - 1].toFixed(1), searches_drawn: timings.length, files });
}
await browser.close();
const sorted = rows.map((r) => r.final_ms).sort((a, b) => a - b);
const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
const server = rows.map((r) => r.server_ms).sort((a, b) => a - b);
const spct = (p) => server[Math.min(server.length - 1, Math.floor(p * server.length))];
console.log(JSON.stringify({ queries: rows.length, p50_ms: pct(0.5), p95_ms: pct(0.95), server_p50_ms: spct(0.5), rows }, null, 1));
