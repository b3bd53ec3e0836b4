// quarry's search page. Every view is drawn from the same HTTP API other clients use; the URL
// holds the view and its query so any of them can be shared. Data only ever reaches the page as
// text nodes (never as markup), except the impact graph, an SVG the server escapes and draws.
"use strict";

const $ = (sel) => document.querySelector(sel);
const main = $("#main");
const box = $("#q");
const status = $("#status");
const TOKEN_KEY = "quarry-token";
// Each keystroke searches at once (keystrokes of one event-loop turn, a paste or an IME
// composition, make one search): a newer search aborts the one in flight and a stale answer is
// never drawn, so typing costs the server aborted requests, not the reader waiting time. A
// fixed delay here would be paid on every search (bench/page.sh: 25 ms of a p50 of 79 ms).
const DEBOUNCE_MS = 0;
// Keystroke-to-paint times of the last searches (ms), read by bench/ and the browser test.
window.quarryTimings = [];
// Of each, the part spent waiting for the server's answer (request sent to JSON read).
window.quarryFetchTimings = [];

// A path as it may be shown: characters that reorder or hide text (bidirectional controls,
// zero-width ones) are written as their code points, so `evil\u202Etxt.py` never reads as
// "evilyp.txt" and two names that differ only by an invisible character look different.
const HIDDEN = /[\u061C\u115F\u1160\u180E\u200B-\u200F\u202A-\u202E\u2060-\u2064\u2066-\u206F\u3164\uFEFF\uFFA0]/g;
function shown(text) {
  return String(text).replace(HIDDEN, (c) => `\u27E6U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27E7`);
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") node.className = v;
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

function params() { return new URLSearchParams(location.search); }

function pageUrl(values) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v) p.set(k, v);
  const s = p.toString();
  return s ? "/?" + s : "/";
}

// ---- the API, with the token when the server wants one ----------------------------------

class Unauthorized extends Error {}

async function api(path, query, signal) {
  const url = new URL(path, location.origin);
  for (const [k, v] of Object.entries(query || {})) if (v !== undefined && v !== null && v !== "") url.searchParams.set(k, v);
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers.Authorization = "Bearer " + token;
  const response = await fetch(url, { headers, signal });
  if (response.status === 401) throw new Unauthorized();
  if (path.endsWith(".svg")) {
    if (!response.ok) throw new Error((await response.json()).error || response.statusText);
    return response.text();
  }
  const body = await response.json();
  if (!response.ok) throw new Error(body.error || response.statusText);
  return body;
}

function askForToken() {
  const form = $("#token-form");
  form.hidden = false;
  $("#token").focus();
}

$("#token-form").addEventListener("submit", (e) => {
  e.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("#token").value);
  $("#token-form").hidden = true;
  loadFilters().then(() => route(false));
});

function failed(error) {
  if (error.name === "AbortError") return;
  if (error instanceof Unauthorized) { askForToken(); return; }
  main.replaceChildren(el("p", { class: "error", text: String(error.message || error) }));
}

// ---- search as you type ------------------------------------------------------------------

let generation = 0;
let inflight = null;
let debounce = null;
let typedAt = 0;

function filters() {
  return { repo: $("#f-repo").value, lang: $("#f-lang").value, type: $("#f-type").value, mode: $("#f-mode").value, path: $("#f-path").value };
}

function tab() { return document.querySelector('input[name="tab"]:checked').value; }

function scheduleSearch() {
  typedAt = performance.now();
  clearTimeout(debounce);
  debounce = setTimeout(() => {
    const q = box.value;
    const f = filters();
    history.replaceState(null, "", pageUrl({ q, tab: tab() === "history" ? "history" : "", ...f }));
    search(q, f, typedAt);
  }, DEBOUNCE_MS);
}

async function search(q, f, started) {
  const mine = ++generation;
  if (inflight) inflight.abort();
  inflight = new AbortController();
  if (!q.trim()) { main.replaceChildren(); status.textContent = ""; return; }
  const asked = performance.now();
  let answered = asked;
  try {
    let node;
    if (tab() === "history") {
      const found = await api("/api/search/commits", { query: q, repo: f.repo, path: f.path, mode: f.mode, limit: 30 }, inflight.signal);
      if (mine !== generation) return; // a newer keystroke won
      answered = performance.now();
      node = commitList(found.commits, `${found.commits.length} commits (${found.mode})`, `Commits for ${q}`);
      for (const warning of found.warnings || []) node.prepend(el("p", { class: "route-note", role: "note", text: warning }));
    } else {
      const found = await api("/api/search/code", { query: q, repo: f.repo, language: f.lang, type: f.type, path: f.path, mode: f.mode, limit: 30, colour: true }, inflight.signal);
      if (mine !== generation) return;
      answered = performance.now();
      node = codeResults(found, q);
    }
    main.replaceChildren(node);
    main.dataset.query = q; // what the results on show answer (the browser test waits on it)
    status.textContent = "";
    if (started) {
      requestAnimationFrame(() => setTimeout(() => {
        if (mine === generation) {
          window.quarryTimings.push(performance.now() - started);
          window.quarryFetchTimings.push(answered - asked);
        }
      }, 0));
    }
  } catch (e) {
    if (mine === generation) failed(e);
  }
}

// Words of prose that mark nothing worth seeing (an issue text's "the", "which").
const STOP = new Set("the and for are but not you all any can had her was one our out has have been from this that with they which when what where who will would there their then than them these those into your just also some such only other more most very about after before because could should does doing each should while were".split(" "));

// The words a result's lines are marked by: a short query's words, or of a long one (a pasted
// issue text) only those that look like code (snake_case, camelCase, digits), stop words aside.
function queryWords(q) {
  const words = (q.match(/[A-Za-z_][A-Za-z0-9_]{2,}/g) || []).filter((w) => !STOP.has(w.toLowerCase()));
  const codeLike = (w) => /_|[a-z][A-Z]|[0-9]/.test(w);
  const kept = words.length > 8 ? words.filter(codeLike) : words;
  return [...new Set(kept.map((w) => w.toLowerCase()))];
}

// A line with the query's words marked, as text nodes and <mark>s.
function marked(text, words) {
  if (!words.length) return [text];
  const pattern = new RegExp("(" + words.map((w) => w.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|") + ")", "gi");
  const out = [];
  let last = 0;
  for (const m of text.matchAll(pattern)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    out.push(el("mark", { text: m[0] }));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

function codeResults(found, q) {
  const words = queryWords(q);
  const frag = document.createDocumentFragment();
  frag.append(el("h1", { class: "visually-hidden", text: `Results for ${q}` }));
  if (found.route) {
    const languages = found.route.languages && found.route.languages.length ? ` in ${found.route.languages.join(", ")}` : "";
    frag.append(el("p", { class: "route", text: `read as ${found.route.class || "asked"}, answered by ${found.route.route}${languages} · ${found.mode}` }));
    if (found.route.note) frag.append(el("p", { class: "route-note", role: "note", text: found.route.note }));
  }
  if (!found.results.length) {
    frag.append(el("p", { class: "empty", text: (found.hint || "Nothing found.") }));
    return frag;
  }
  const groups = new Map();
  for (const r of found.results) {
    const key = r.repo + "\u0000" + r.path;
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  for (const results of groups.values()) {
    const first = results[0];
    const section = el("section", { class: "file-group" },
      el("h2", {}, el("a", { href: pageUrl({ file: first.path, repo: first.repo }) + "#L" + first.start_line, text: shown(first.path) }),
        el("span", { class: "repo", text: first.repo })));
    for (const r of results) {
      // The lines holding the query's words, where the answer names them; else the first.
      const shownLines = r.matched_lines && r.matched_lines.length
        ? r.matched_lines
        : (r.text || "").split("\n").slice(0, 12).map((text, i) => ({ line: r.start_line + i, text }));
      const pre = el("pre", { class: "code" });
      let previous = null;
      for (const { line, text, spans } of shownLines) {
        if (previous !== null && line > previous + 1) pre.append(el("span", { class: "gap", text: "⋯" }), "\n");
        // In the file view's colours when the answer gives them, the query's words marked.
        const nodes = spans && spans.length
          ? spans.map((span) => el("span", { class: span.class ? "hl-" + span.class.replace(/\./g, "-") : null }, ...marked(span.text, words)))
          : marked(text, words);
        pre.append(el("span", { class: "ln", text: line }), ...nodes, "\n");
        previous = line;
      }
      if (r.more_matched) pre.append(el("span", { class: "more", text: `${r.more_matched} more matching line${r.more_matched === 1 ? "" : "s"}` }), "\n");
      section.append(el("a", { class: "hit", href: pageUrl({ file: r.path, repo: r.repo }) + "#L" + r.start_line },
        el("span", { class: "reason", text: [r.symbol, r.reason].filter(Boolean).join(" — ") || `${r.kind || ""} lines ${r.start_line}-${r.end_line}` }),
        pre));
    }
    frag.append(section);
  }
  return frag;
}

function commitList(commits, caption, heading) {
  const frag = document.createDocumentFragment();
  if (heading) frag.append(el("h1", { class: "visually-hidden", text: heading }));
  frag.append(el("p", { class: "route", text: caption }));
  if (!commits.length) { frag.append(el("p", { class: "empty", text: "No commits." })); return frag; }
  const list = el("ul", { class: "commits" });
  for (const c of commits) {
    list.append(el("li", {}, el("a", { class: "hit", href: pageUrl({ commit: c.sha, repo: c.repo }) },
      el("span", { class: "sha", text: c.sha.slice(0, 12) }),
      el("span", { class: "date", text: (c.date || "").slice(0, 10) }),
      el("span", { text: `${c.subject} — ${c.author}` }))));
  }
  frag.append(list);
  return frag;
}

// ---- the file view ------------------------------------------------------------------------

// Languages of prose: no name links, no callers.
const DOCUMENTS = new Set(["markdown", "text", "rst", "asciidoc", "pdf"]);
// Rows of a file view drawn before its first paint, and per slice after it.
const FIRST_ROWS = 400;
const ROW_SLICE = 1000;
const NOT_NAMES = new Set(["keyword", "comment", "string", "string.special", "number", "operator", "punctuation", "escape", "constant.builtin", "variable.builtin", "type.builtin", "function.builtin"]);

// A span's text with each identifier a link to its definition (the name route).
// A highlighted span's nodes; in code, each name links to a search for it in the same repo.
function spanNodes(span, repo, linkNames) {
  const cls = span.class ? "hl-" + span.class.replace(/\./g, "-") : null;
  if (!linkNames || (span.class && NOT_NAMES.has(span.class))) return [el("span", { class: cls, text: span.text })];
  const out = [];
  let last = 0;
  for (const m of span.text.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)) {
    if (m.index > last) out.push(span.text.slice(last, m.index));
    out.push(el("a", { class: "id" + (cls ? " " + cls : ""), href: pageUrl({ q: m[0], repo }), text: m[0] }));
    last = m.index + m[0].length;
  }
  if (last < span.text.length) out.push(span.text.slice(last));
  return cls && out.length === 1 && typeof out[0] === "string" ? [el("span", { class: cls, text: out[0] })] : out;
}

async function showFile(path, repo, signal) {
  const [view, summary] = await Promise.all([
    api("/api/file", { path, repo }, signal),
    api("/api/summary", { file: path, repo }, signal).catch(() => null),
  ]);
  // Names in code link to their search; prose does not (every word of a README was a link).
  const code = !DOCUMENTS.has(view.language);
  const row = (spans, i) => el("tr", { id: "L" + (i + 1) },
    el("td", { class: "n" }, el("a", { href: "#L" + (i + 1), text: i + 1 })),
    el("td", {}, spans.flatMap((span) => spanNodes(span, repo, code))));
  const rows = el("tbody");
  // What the first screen (and the line asked for) needs is drawn now, the rest in slices
  // after it: a 7,280-line file drawn at once took ~5 s to open.
  const asked = Number((location.hash.match(/^#L(\d+)$/) || [])[1] || 0);
  let drawn = Math.min(view.lines.length, Math.max(FIRST_ROWS, asked + 100));
  view.lines.slice(0, drawn).forEach((spans, i) => rows.append(row(spans, i)));
  const drawMore = () => {
    if (!rows.isConnected) return; // another view replaced this one
    const end = Math.min(drawn + ROW_SLICE, view.lines.length);
    const slice = document.createDocumentFragment();
    for (; drawn < end; drawn++) slice.append(row(view.lines[drawn], drawn));
    rows.append(slice);
    if (drawn < view.lines.length) setTimeout(drawMore, 0);
  };
  if (drawn < view.lines.length) setTimeout(drawMore, 0);
  const outline = el("nav", { class: "outline", "aria-label": "Outline" }, el("h2", { class: "visually-hidden", text: "Outline" }));
  const items = summary && (summary.items || (summary.structure && summary.structure.items));
  if (items && items.length) {
    const list = el("ul");
    for (const it of items) {
      const li = el("li", { style: null },
        el("a", { href: "#L" + it.start_line, text: it.name }), " ",
        el("span", { class: "kind", text: it.kind }),
        // A heading has no callers and no history of its own.
        code ? [" ", el("a", { href: pageUrl({ impact: it.name, repo }), title: "callers of " + it.name, text: "callers" }), " ",
          el("a", { href: pageUrl({ touches: path + "::" + it.name, repo }), title: "history of " + it.name, text: "history" })] : null);
      li.dataset.depth = it.depth || 0;
      if (it.depth) li.classList.add("nested");
      list.append(li);
    }
    outline.append(list);
  } else {
    outline.append(el("p", { class: "empty", text: "No outline." }));
  }
  const head = el("div", {},
    el("h1", {}, `${view.repo} / ${shown(view.path)}`),
    el("div", { class: "file-actions" },
      el("span", { text: view.language + (view.highlighted ? "" : " (plain)") + (view.truncated ? " — first lines only" : "") }),
      el("a", { href: pageUrl({ touches: path, repo }), text: "History of this file" })));
  main.replaceChildren(el("div", { class: "file-view" },
    el("div", {}, head, el("div", { class: "code-wrap" }, el("table", { class: "code" }, rows))),
    outline));
  document.title = `${shown(view.path)} — quarry`;
  jumpToLine();
}

function jumpToLine() {
  const m = location.hash.match(/^#L(\d+)$/);
  if (!m) return;
  document.querySelectorAll("tr.target").forEach((r) => r.classList.remove("target"));
  const row = document.getElementById("L" + m[1]);
  if (row) { row.classList.add("target"); row.scrollIntoView({ block: "center" }); }
}

// ---- history: a commit, a timeline --------------------------------------------------------

async function showCommit(sha, repo, signal) {
  const c = await api("/api/commit", { sha, repo }, signal);
  const diff = el("pre", { class: "diff" });
  for (const line of (c.patch || "").split("\n")) {
    let cls = null;
    if (line.startsWith("+++") || line.startsWith("---")) cls = "file";
    else if (line.startsWith("@@")) cls = "hunk";
    else if (line.startsWith("+")) cls = "add";
    else if (line.startsWith("-")) cls = "del";
    diff.append(el("span", { class: cls, text: line || " " }));
  }
  const files = el("ul", {}, c.files.map((f) => el("li", {},
    el("a", { href: pageUrl({ file: f.path, repo: c.repo }), text: shown(f.path) }),
    ` ${f.status}` + (f.added !== undefined && f.added !== null ? ` +${f.added} −${f.removed}` : ""))));
  main.replaceChildren(el("article", { class: "commit" },
    el("h1", { text: c.subject }),
    el("p", { class: "meta", text: `${c.sha} · ${c.author} <${c.email}> · ${new Date(c.author_time * 1000).toISOString().slice(0, 19).replace("T", " ")} · ${c.repo}` }),
    c.body ? el("p", { class: "body", text: c.body }) : null,
    files,
    c.patch_truncated ? el("p", { class: "empty", text: "The stored patch is cut at the ingest limit." }) : null,
    diff));
  document.title = `${c.sha.slice(0, 12)} ${c.subject} — quarry`;
}

const SVG_NS = "http://www.w3.org/2000/svg";

function svgEl(tag, attrs) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  return node;
}

async function showTouches(target, repo, signal) {
  const found = await api("/api/touches", { path: target, repo, limit: 200 }, signal);
  const commits = found.commits || [];
  // Drawn at the width it is shown at (a fixed box stretched to fit drew its dots as ovals).
  const width = Math.max(320, Math.round(main.clientWidth || 1000));
  const axis = svgEl("svg", { class: "timeline-axis", viewBox: `0 0 ${width} 70`, role: "group", "aria-label": `${commits.length} commits over time` });
  if (commits.length) {
    const times = commits.map((c) => Date.parse(c.date));
    const lo = Math.min(...times), hi = Math.max(...times);
    const x = (t) => 20 + (hi === lo ? (width - 40) / 2 : ((t - lo) / (hi - lo)) * (width - 40));
    axis.append(svgEl("line", { x1: 20, y1: 35, x2: width - 20, y2: 35 }));
    commits.forEach((c, i) => {
      const a = svgEl("a", { href: pageUrl({ commit: c.sha, repo: c.repo }) });
      const dot = svgEl("circle", { cx: x(times[i]), cy: 35, r: 6 });
      const title = svgEl("title", {});
      title.textContent = `${c.date.slice(0, 10)} ${c.subject}`;
      dot.append(title);
      a.append(dot);
      axis.append(a);
    });
    for (const [t, anchor] of [[lo, "start"], [hi, "end"]]) {
      const label = svgEl("text", { x: anchor === "start" ? 20 : width - 20, y: 62, "text-anchor": anchor });
      label.textContent = new Date(t).toISOString().slice(0, 10);
      axis.append(label);
    }
  }
  main.replaceChildren(el("section", { class: "timeline" },
    el("h1", { text: `History of ${target}` }),
    found.hint ? el("p", { class: "route-note", role: "note", text: found.hint }) : null,
    axis,
    commitList(commits, `${commits.length} commits touched it${found.more ? " (more not shown)" : ""}`)));
  document.title = `history of ${target} — quarry`;
}

async function showImpact(name, repo, signal) {
  const svgText = await api("/api/impact.svg", { name, repo, depth: 3 }, signal);
  const doc = new DOMParser().parseFromString(svgText, "image/svg+xml");
  const svg = document.importNode(doc.documentElement, true);
  main.replaceChildren(el("section", { class: "graph-view" },
    el("h1", { text: `Callers of ${name} (matched by name, 3 steps)` }),
    el("div", { class: "graph-wrap" }, svg)));
  document.title = `callers of ${name} — quarry`;
}

// ---- routing by URL ------------------------------------------------------------------------

let viewing = null;

// `initial`: the first draw after the page loads, which must not undo what was typed while
// the filters loaded.
async function route(initial) {
  // Typing began before the page finished loading: that search is the one to show.
  if (initial === true && typedAt > 0) return;
  const p = params();
  if (viewing) viewing.abort();
  viewing = new AbortController();
  const signal = viewing.signal;
  const repo = p.get("repo") || "";
  if (p.has("q") || initial !== true) { box.value = p.get("q") || ""; fitBox(); }
  document.querySelector(`input[name="tab"][value="${p.get("tab") === "history" ? "history" : "code"}"]`).checked = true;
  try {
    if (p.get("file")) return await showFile(p.get("file"), repo, signal);
    if (p.get("commit")) return await showCommit(p.get("commit"), repo, signal);
    if (p.get("touches")) return await showTouches(p.get("touches"), repo, signal);
    if (p.get("impact")) return await showImpact(p.get("impact"), repo, signal);
    $("#f-repo").value = repo;
    $("#f-lang").value = p.get("lang") || "";
    $("#f-type").value = p.get("type") || "";
    $("#f-mode").value = p.get("mode") || "";
    $("#f-path").value = p.get("path") || "";
    document.title = p.get("q") ? `${p.get("q")} — quarry` : "quarry";
    if (initial === true && !p.has("q")) return;
    await search(p.get("q") || "", filters(), 0);
  } catch (e) {
    failed(e);
  }
}

// Links inside the page change the view without a reload.
document.addEventListener("click", (e) => {
  if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
  const a = e.target.closest("a");
  if (!a) return;
  const href = a.getAttribute("href") || (a.getAttribute("xlink:href"));
  if (!href || !href.startsWith("/")) return;
  const url = new URL(href, location.origin);
  e.preventDefault();
  if (url.pathname === location.pathname && url.search === location.search && url.hash) {
    history.pushState(null, "", url.hash);
    jumpToLine();
    return;
  }
  history.pushState(null, "", url.pathname + url.search + url.hash);
  route(false);
});
window.addEventListener("popstate", () => route(false));
window.addEventListener("hashchange", jumpToLine);

// One line until a report is pasted or Shift+Enter starts a new line: then the box grows,
// and the query keeps its line breaks (a pasted stack trace read as one line ranked files
// differently than `search --stdin`).
function fitBox() { box.rows = Math.min(12, Math.max(1, box.value.split("\n").length)); }
box.addEventListener("input", fitBox);
box.addEventListener("input", () => {
  if (params().get("file") || params().get("commit") || params().get("touches") || params().get("impact")) {
    history.pushState(null, "", pageUrl({ q: box.value }));
  }
  scheduleSearch();
});
$("#search-form").addEventListener("submit", (e) => { e.preventDefault(); scheduleSearch(); });
for (const input of document.querySelectorAll('input[name="tab"], #f-repo, #f-lang, #f-type, #f-mode, #f-path')) {
  input.addEventListener(input.id === "f-path" ? "input" : "change", scheduleSearch);
}

// ---- keyboard: / to search, arrows through results, Enter to open, Esc to go back ----------

function hits() { return [...main.querySelectorAll("a.hit")]; }

document.addEventListener("keydown", (e) => {
  const typing = e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.target instanceof HTMLTextAreaElement;
  if (e.key === "/" && !typing) { e.preventDefault(); box.focus(); box.select(); return; }
  if (e.key === "Escape") {
    if (document.activeElement === box && box.value) { box.value = ""; scheduleSearch(); return; }
    if (params().get("q") === null && (params().get("file") || params().get("commit") || params().get("touches") || params().get("impact"))) { history.back(); return; }
    box.blur();
    return;
  }
  if (e.key === "ArrowDown" || e.key === "ArrowUp") {
    const list = hits();
    if (!list.length || (typing && e.target !== box)) return;
    e.preventDefault();
    const at = list.indexOf(document.activeElement);
    const next = e.key === "ArrowDown" ? Math.min(at + 1, list.length - 1) : at - 1;
    list.forEach((h) => h.classList.remove("selected"));
    if (next < 0) { box.focus(); return; }
    list[next].classList.add("selected");
    list[next].focus();
  }
  if (e.key === "Enter" && e.target === box && !e.shiftKey) {
    e.preventDefault();
    const first = hits()[0];
    if (first) first.click();
  }
});

// ---- filters' choices from the server's status ---------------------------------------------

async function loadFilters() {
  try {
    const s = await api("/api/status", {});
    const repos = $("#f-repo");
    for (const r of s.repos || []) {
      const name = (r.repo && r.repo.name) || r.name;
      repos.append(el("option", { value: name, text: name }));
    }
    const langs = new Set();
    for (const r of s.repos || []) for (const l of Object.keys(r.languages || {})) langs.add(l);
    for (const l of [...langs].sort()) $("#f-lang").append(el("option", { value: l, text: l }));
    $("#f-repo").value = params().get("repo") || "";
    $("#f-lang").value = params().get("lang") || "";
  } catch (e) {
    if (e instanceof Unauthorized) askForToken();
  }
}

loadFilters().then(() => route(true));
if (!params().toString()) box.focus();
