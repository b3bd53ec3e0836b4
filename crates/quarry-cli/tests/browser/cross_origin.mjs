// A page on another origin tries to start a sync on a quarry server, in Debian's chromium driven
// by playwright-core (scripts/install-test-clients.sh installs both). Run by tests/doors.rs:
//   node cross_origin.mjs BASE_URL foreign|own
// foreign: a second server on another loopback port (another origin) serves a page that posts
//   to BASE_URL/api/code-files/sync as a browser lets any site do without asking: fetch with
//   mode 'no-cors' and a text/plain body, the same as a form's urlencoded body, and a beacon.
// own: the server's own page posts the same sync with a JSON body.
// Prints one JSON object of what it did; exits 1 with the reason on a failure.
import { createRequire } from "node:module";
import http from "node:http";
import path from "node:path";

const clients = process.env.QUARRY_TEST_CLIENTS;
const require = createRequire(path.join(clients, "package.json"));
const { chromium } = require("playwright-core");

const [base, which] = process.argv.slice(2);
const target = `${base}/api/code-files/sync`;

const evil = http.createServer((req, res) => {
  res.writeHead(200, { "Content-Type": "text/html" });
  res.end("<!doctype html><title>elsewhere</title><p>nothing to see</p>");
});
await new Promise((done) => evil.listen(0, "localhost", done));
const evilBase = `http://localhost:${evil.address().port}`;

const browser = await chromium.launch({
  executablePath: process.env.QUARRY_CHROMIUM || "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-dev-shm-usage"],
});
let result;
try {
  const page = await browser.newPage();
  if (which === "foreign") {
    await page.goto(evilBase + "/");
    result = await page.evaluate(async (target) => {
      let sent = 0;
      const body = '{"repo":"repo"}';
      try {
        await fetch(target, { method: "POST", mode: "no-cors", headers: { "Content-Type": "text/plain" }, body });
        sent++;
      } catch (e) {}
      try {
        await fetch(target, { method: "POST", mode: "no-cors", headers: { "Content-Type": "application/x-www-form-urlencoded" }, body });
        sent++;
      } catch (e) {}
      if (navigator.sendBeacon(target, new Blob([body], { type: "text/plain" }))) sent++;
      await new Promise((done) => setTimeout(done, 1000));
      return { sent, origin: location.origin };
    }, target);
  } else {
    await page.goto(base + "/");
    result = await page.evaluate(async (target) => {
      const response = await fetch(target, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: '{"repo":"repo"}',
      });
      return { status: response.status };
    }, target);
  }
} finally {
  await browser.close();
  evil.close();
}
console.log(JSON.stringify(result));
