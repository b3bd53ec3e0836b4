// The search page in a real browser: Debian's chromium driven by playwright-core (both
// installed by scripts/install-test-clients.sh), headless, with every request that leaves the
// server's origin blocked. Run by tests/page.rs against a real `quarry serve`:
//   node page.mjs BASE_URL SCREENSHOT_DIR
// Prints one JSON object of what it saw; exits 1 with the reason on the first failure.
import { createRequire } from "node:module";
import { mkdirSync } from "node:fs";
import path from "node:path";

const clients = process.env.QUARRY_TEST_CLIENTS;
const require = createRequire(path.join(clients, "package.json"));
const { chromium } = require("playwright-core");
const axeSource = require("fs").readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

const [base, shots] = process.argv.slice(2);
mkdirSync(shots, { recursive: true });
const seen = { foreign_requests: [], console_errors: [], checks: [] };

function check(ok, what) {
  seen.checks.push(what);
  if (!ok) throw new Error("failed: " + what);
}

const browser = await chromium.launch({
  executablePath: process.env.QUARRY_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
try {
  const context = await browser.newContext({ viewport: { width: 1200, height: 800 } });
  const page = await context.newPage();
  const origin = new URL(base).origin;
  await page.route("**/*", (route) => {
    const url = route.request().url();
    if (new URL(url).origin !== origin) { seen.foreign_requests.push(url); return route.abort(); }
    return route.continue();
  });
  page.on("console", (m) => { if (m.type() === "error") seen.console_errors.push(m.text()); });
  page.on("pageerror", (e) => seen.console_errors.push(String(e)));

  async function axe(name) {
    // The page's CSP forbids inline script and eval, so axe's source is evaluated through the
    // devtools protocol, which the policy does not govern.
    if (!(await page.evaluate(() => Boolean(window.axe)))) await page.evaluate(axeSource);
    const result = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ["violations"] });
      return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
    });
    const serious = result.filter((v) => v.impact === "serious" || v.impact === "critical");
    seen[`axe_${name}`] = result;
    check(serious.length === 0, `no serious accessibility violations on the ${name} view: ${JSON.stringify(serious)}`);
  }

  if (process.env.QUARRY_PAGE_TOKEN) {
    // A server with a token: the page asks for it, keeps it in the tab, and searches with it.
    await page.goto(base + "/");
    await page.waitForSelector("#token-form:not([hidden])");
    await page.fill("#token", process.env.QUARRY_PAGE_TOKEN);
    await page.click("#token-form button");
    await page.fill("#q", "getUserName");
    await page.waitForSelector('#main[data-query="getUserName"]');
    const kept = await page.evaluate(() => sessionStorage.getItem("quarry-token"));
    check(kept === process.env.QUARRY_PAGE_TOKEN, "the token is kept in the tab");
    const found = await page.$$eval(".file-group h2 a", (as) => as.map((a) => a.textContent));
    check(found[0] === "app/users.py", `with the token the page searches (${found})`);
    console.log(JSON.stringify(seen));
    await browser.close();
    process.exit(0);
  }

  // A name: its definition first, results as you type.
  await page.goto(base + "/");
  check(await page.evaluate(() => document.activeElement.id === "q"), "the empty page starts in the search box");
  await page.evaluate(() => document.activeElement.blur());
  await page.keyboard.press("/");
  check(await page.evaluate(() => document.activeElement.id === "q"), "`/` focuses the search box");
  await page.keyboard.type("getUserName");
  await page.waitForSelector('#main[data-query="getUserName"]');
  const first = await page.$eval(".file-group h2 a", (a) => a.textContent);
  check(first === "app/users.py", `a name's definition first (got ${first})`);
  check(new URL(page.url()).searchParams.get("q") === "getUserName", "the URL holds the query");
  const reason = await page.$eval(".hit .reason", (n) => n.textContent);
  check(/getUserName/.test(reason), `each result shows its reason (${reason})`);
  const snippetColours = await page.$$eval(".hit pre [class^='hl-']", (n) => n.map((s) => s.className));
  check(snippetColours.includes("hl-keyword"), `snippets are coloured as the file view is (${snippetColours})`);
  const markedWords = await page.$$eval(".hit pre mark", (n) => n.map((m) => m.textContent));
  check(markedWords.includes("getUserName"), `coloured snippets still mark the query's words (${markedWords})`);
  await page.screenshot({ path: path.join(shots, "search-name.png") });
  await axe("search");

  // A question: ranked code.
  await page.fill("#q", "");
  await page.keyboard.type("retry failed uploads with backoff");
  await page.waitForSelector('#main[data-query="retry failed uploads with backoff"]');
  const ranked = await page.$$eval(".file-group h2 a", (as) => as.map((a) => a.textContent));
  check(ranked.length > 0 && /upload|guide/.test(ranked[0]), `a question ranks code (${ranked.join(", ")})`);

  // Arrows and Enter open the file view at the line; identifiers link to definitions.
  await page.fill("#q", "");
  await page.keyboard.type("delete_user");
  await page.waitForSelector('#main[data-query="delete_user"]');
  await page.keyboard.press("ArrowDown");
  await page.keyboard.press("Enter");
  await page.waitForSelector("table.code tr.target");
  const target = await page.$eval("table.code tr.target", (r) => r.id);
  check(target === "L7", `Enter on a result opens the file view at its line (${target})`);
  const coloured = await page.$$eval("table.code .hl-keyword", (n) => n.length);
  check(coloured > 0, "the file view is coloured by the grammar");
  const outline = await page.$$eval(".outline li > a:first-child", (as) => as.map((a) => a.textContent));
  check(outline.includes("getUserName") && outline.includes("UserStore"), `the outline lists the definitions (${outline})`);
  const link = await page.$eval("table.code a.id", (a) => a.getAttribute("href"));
  check(/^\/\?q=/.test(link) && /repo=shop/.test(link), `identifiers link to their definitions in the same repo (${link})`);
  await page.screenshot({ path: path.join(shots, "file.png") });
  await axe("file");

  // History: commit search, a commit's diff, a file's timeline.
  await page.goto(base + "/?tab=history&q=" + encodeURIComponent("user names"));
  await page.waitForSelector(".commits a.hit");
  await page.click(".commits a.hit");
  await page.waitForSelector("pre.diff");
  const added = await page.$$eval("pre.diff .add", (n) => n.length);
  check(added > 0, "a commit shows its diff");
  await page.screenshot({ path: path.join(shots, "commit.png") });
  await axe("commit");
  await page.goto(base + "/?touches=app/users.py");
  await page.waitForSelector("svg.timeline-axis circle");
  const dots = await page.$$eval("svg.timeline-axis circle", (n) => n.length);
  check(dots >= 2, `a file's timeline draws its commits (${dots})`);
  const dot = await page.$eval("svg.timeline-axis circle", (c) => { const r = c.getBoundingClientRect(); return [r.width, r.height]; });
  check(Math.abs(dot[0] - dot[1]) < 1, `a timeline's dots are round (${dot})`);

  // A document's view: prose words are not links, headings have no callers.
  await page.goto(base + "/?file=docs/guide.md&repo=shop");
  await page.waitForSelector(".outline li");
  const proseLinks = await page.$$eval("table.code a.id", (n) => n.length);
  const headingLinks = await page.$$eval(".outline li a", (n) => n.map((a) => a.textContent));
  check(proseLinks === 0 && !headingLinks.includes("callers"), `a document has no name links (${proseLinks}, ${headingLinks})`);

  // A pasted report keeps its line breaks, and the box grows to show them.
  await page.goto(base + "/");
  await page.fill("#q", "Traceback (most recent call last):\n  File \"app/users.py\", line 5, in getUserName");
  const pasted = await page.$eval("#q", (q) => [q.value.includes("\n"), q.rows]);
  check(pasted[0] && pasted[1] >= 2, `a pasted report keeps its lines (${pasted})`);
  await page.screenshot({ path: path.join(shots, "timeline.png") });

  // Impact as a graph, each node a link.
  await page.goto(base + "/?impact=getUserName");
  await page.waitForSelector("svg.graph");
  const nodes = await page.$$eval("svg.graph a", (n) => n.length);
  check(nodes >= 1, `the impact graph draws its callers as links (${nodes})`);
  await page.screenshot({ path: path.join(shots, "impact.png") });
  await axe("impact");

  // Dark mode and a phone.
  await page.emulateMedia({ colorScheme: "dark" });
  await page.setViewportSize({ width: 390, height: 800 });
  await page.goto(base + "/?q=getUserName");
  await page.waitForSelector('#main[data-query="getUserName"]');
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 1, `readable on a phone: no sideways scroll (${overflow}px)`);
  await page.screenshot({ path: path.join(shots, "phone-dark.png") });

  // Keystroke to painted results, measured by the page (Performance API).
  await page.setViewportSize({ width: 1200, height: 800 });
  await page.emulateMedia({ colorScheme: "light" });
  await page.goto(base + "/");
  await page.keyboard.type("parse_config_file");
  await page.waitForSelector('#main[data-query="parse_config_file"]');
  await page.waitForFunction(() => window.quarryTimings.length > 0);
  seen.keystroke_to_paint_ms = await page.evaluate(() => window.quarryTimings);
  await page.screenshot({ path: path.join(shots, "search.png") });

  check(seen.foreign_requests.length === 0, `nothing is fetched from elsewhere (${seen.foreign_requests})`);
  check(seen.console_errors.length === 0, `no errors in the console (${seen.console_errors})`);
  console.log(JSON.stringify(seen));
} catch (e) {
  console.log(JSON.stringify(seen));
  console.error(String(e.stack || e));
  process.exitCode = 1;
} finally {
  await browser.close();
}
