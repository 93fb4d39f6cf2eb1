// The session viewer in a real browser: headless Chromium (Debian's package, /usr/bin/chromium)
// driven by playwright-core against `wrangler dev` with auth on, through a proxy that can cut event
// streams. Run by `npm run test:browser`; screenshots go to test-results/.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium } from "playwright-core";
import { packWorkspace } from "../../client/pack.mjs";
import { freePort, startDevServer } from "../../scripts/blackbox/dev-server.mjs";
import { startFakeModel } from "../../scripts/blackbox/fake-model.mjs";
import { startFlakyProxy } from "../../scripts/blackbox/flaky-proxy.mjs";

const TOKEN = "tok-viewer-test-0123456789";
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";
const RESULTS = path.resolve("test-results");
let dev;
let model;
let proxy;
let stateDir;
let browser;
let page;

/** @type {string[]} */
const cspViolations = [];
/** The page's last API answers (method, path, status), for a wait that times out. */
const recentAnswers = [];
/** Loads of the icon the browser asks for by itself when the page declares none (a 404 on every load). */
const faviconLoads = [];

before(async () => {
  model = await startFakeModel();
  stateDir = mkdtempSync(path.join(os.tmpdir(), "pi-viewer-"));
  dev = await startDevServer({
    port: await freePort(),
    persistTo: path.join(stateDir, "state"),
    modelUrl: `http://127.0.0.1:${model.port}/v1`,
    vars: { AUTH_TOKENS: `viewer:${TOKEN}`, STREAM_TOKEN_SECRET: "a-viewer-test-secret-of-32-characters" },
  });
  proxy = await startFlakyProxy(dev.base);
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox"] });
  page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.on("pageerror", (err) => console.error(`page error: ${err.message}`));
  // The page's last API answers, printed when a wait times out (one CI run timed out in openIdle).
  page.on("response", (res) => {
    const url = new URL(res.url());
    if (!url.pathname.startsWith("/api/")) return;
    recentAnswers.push(`${new Date().toISOString().slice(11, 23)} ${res.request().method()} ${url.pathname}${url.search} ${res.status()}`);
    if (recentAnswers.length > 30) recentAnswers.shift();
  });
  // Anything the page's Content-Security-Policy refused (public/_headers): checked by the last test.
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
    if (new URL(msg.location().url || "about:blank").pathname === "/favicon.ico") faviconLoads.push(msg.text());
  });
  mkdirSync(RESULTS, { recursive: true });
});

after(async () => {
  await browser?.close();
  await proxy?.close();
  await dev?.stop();
  model?.server.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** The harness API, as a script would call it. */
async function api(method, urlPath, body, type = "application/json") {
  const res = await fetch(`${dev.base}${urlPath}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body === undefined ? {} : { "content-type": type }) },
    body: body === undefined ? undefined : type === "application/json" ? JSON.stringify(body) : body,
  });
  if (!res.ok) assert.fail(`${method} ${urlPath}: ${res.status} ${await res.text()}`);
  return res;
}
const jsonl = async (urlPath) =>
  (await (await api("GET", urlPath)).text())
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

async function sessionOnWorkspace(title) {
  const dir = mkdtempSync(path.join(stateDir, "ws-"));
  writeFileSync(path.join(dir, "a.txt"), "hello\n");
  writeFileSync(path.join(dir, "long.txt"), Array.from({ length: 40 }, (_, i) => `line ${i + 1}\n`).join(""));
  const { archive } = await packWorkspace(dir);
  const { workspaceId } = await (await api("POST", "/api/workspaces", archive, "application/gzip")).json();
  const { sessionId } = await (await api("POST", "/api/sessions", { workspaceId, title })).json();
  return sessionId;
}

/** Sends a prompt the way a terminal would, reading its stream to the end. */
async function runToEnd(sessionId, body) {
  await (await api("POST", `/api/sessions/${sessionId}/messages/stream`, body)).text();
}

/** Opens an idle session in the page; waits until its own header is shown (not the last session's). */
async function openIdle(sessionId) {
  await page.goto(`${proxy.base}/#/s/${sessionId}`);
  try {
    await page.waitForFunction((id) => document.getElementById("session-meta").textContent.startsWith(`${id} · idle`), sessionId);
  } catch (err) {
    const meta = await page.evaluate(() => document.getElementById("session-meta").textContent).catch(() => "?");
    console.error(
      `openIdle(${sessionId}) timed out; header: ${JSON.stringify(meta)}; the page's last answers:\n${recentAnswers.join("\n")}`,
    );
    throw err;
  }
}

/** Sends a prompt from the page's box and waits until its answer streams in. */
async function sendFromPage(text) {
  await page.fill("#prompt-text", text);
  await page.click("#prompt button[type=submit]");
  await page.waitForSelector("#timeline .assistant[data-state=streaming]", { timeout: 10_000 });
}

/** The timeline as the page shows it. */
const timelineOf = () =>
  page.$$eval("#timeline > li", (items) =>
    items.map((li) => ({
      key: li.dataset.key,
      kind: li.dataset.kind,
      status: li.dataset.status ?? null,
      text: li.querySelector(".text")?.textContent ?? null,
      result: li.querySelector(".result")?.textContent ?? null,
      content: li.textContent,
    })),
  );

/** The timeline entry an event shows in (null: not shown). */
function entryKey(e) {
  switch (e.type) {
    case "agent_started":
      return `run:${e.runId}`;
    case "agent_completed":
    case "agent_error":
      return `end:${e.runId}`;
    case "brief_injected":
      return `brief:${e.runId}`;
    case "message_queued":
    case "queued_message_withdrawn":
    case "model_retry":
      return `e:${e.seq}`;
    case "queue_updated":
      return null; // the other queue events say it
    default:
      return e.type.startsWith("tool_call_") ? `c:${e.callId}` : `m:${e.messageId}`;
  }
}

/** The page's timeline matches the stored log: one entry per message and call, texts exact. */
async function expectMatchesLog(sessionId) {
  const entries = await timelineOf();
  const keys = entries.map((e) => e.key);
  assert.equal(new Set(keys).size, keys.length, `duplicate entries: ${keys}`);
  const messages = await jsonl(`/api/sessions/${sessionId}/messages`);
  for (const m of messages) {
    if (m.kind === "tool_result") {
      assert.ok(keys.includes(`c:${m.toolCallId}`), `tool call ${m.toolCallId} missing`);
      continue;
    }
    const entry = entries.find((e) => e.key === `m:${m.id}`);
    assert.ok(entry, `message ${m.id} (${m.kind}) missing`);
    assert.equal(entry.text, m.text, `text of ${m.id}`);
  }
  const events = await jsonl(`/api/sessions/${sessionId}/events`);
  for (const e of events.filter((e) => e.type === "agent_completed" || e.type === "agent_error"))
    assert.ok(keys.includes(`end:${e.runId}`), `end of ${e.runId} missing`);
  // In the log's order: each run, message and tool call once, where it first appears.
  const expectedKeys = [];
  for (const e of events) {
    const key = entryKey(e);
    if (key !== null && !expectedKeys.includes(key)) expectedKeys.push(key);
  }
  assert.deepEqual(keys, expectedKeys);
  return entries;
}

/**
 * A session of `runs` one-call runs as the API serves it (info, messages, events; no trace), for
 * page.route. The usage of run i is 1000 + i tokens in, 5 out. `addRun` appends one more run.
 */
function syntheticSession(sessionId, runs, { projectId = null, briefCases = [], compactedRuns = 0 } = {}) {
  const messages = [];
  const events = [];
  let seq = 0;
  const createdAt = new Date().toISOString();
  const base = () => ({ sessionId, createdAt });
  const event = (body) => events.push({ seq: ++seq, eventId: `ev_${seq}`, ...base(), ...body });
  const message = (body) => {
    const id = `m_${++seq}`;
    messages.push({ id, ...base(), parentId: messages.at(-1)?.id ?? null, ...body });
    return id;
  };
  const addRun = () => {
    const i = events.filter((e) => e.type === "agent_started").length;
    const runId = `r_${i}`;
    event({ type: "agent_started", runId });
    if (briefCases.length > 0) event({ type: "brief_injected", runId, caseIds: briefCases });
    event({ type: "user_message_appended", messageId: message({ kind: "user", text: `prompt ${i}` }) });
    if (i < compactedRuns) {
      // The run summarised the history before it answered: a model call of its own.
      event({ type: "compaction_started", reason: "threshold" });
      const summary = { summary: "earlier work", firstKeptMessageId: messages.at(-1).id, tokensBefore: 900, tokensAfter: 100 };
      const compaction = message({ kind: "compaction", ...summary, usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 } });
      event({ type: "compaction_finished", messageId: compaction, tokensBefore: 900, tokensAfter: 100 });
    }
    const usage = { inputTokens: 1000 + i, outputTokens: 5, totalTokens: 1005 + i };
    const answer = message({ kind: "assistant", text: `answer ${i}`, stopReason: "STOP", usage });
    event({ type: "assistant_completed", messageId: answer, stopReason: "STOP" });
    event({ type: "agent_completed", runId, stopReason: "STOP" });
  };
  for (let i = 0; i < runs; i++) addRun();
  const ndjson = (records) => ({
    status: 200,
    contentType: "application/x-ndjson",
    body: records.map((r) => `${JSON.stringify(r)}\n`).join(""),
  });
  // As the API answers: ?after= keeps the records after that seq, x-log-seq says where the log ends.
  const seqOf = (record) => record.seq ?? Number(record.id.slice(2));
  const after = (url, records) => {
    const from = Number(new URL(url).searchParams.get("after") ?? 0);
    return { ...ndjson(records.filter((r) => seqOf(r) > from)), headers: { "x-log-seq": String(seq) } };
  };
  const answer = (url) => {
    const part = new URL(url).pathname.split("/")[4];
    if (part === "messages") return after(url, messages);
    if (part === "events") return after(url, events);
    if (part === "trace") return ndjson([]);
    if (part === "attributions") return { status: 200, contentType: "application/json", body: JSON.stringify({ attributions: [] }) };
    const info = { id: sessionId, title: "300 runs", workspaceId: null, projectId, createdAt, status: "idle" };
    return {
      status: 200,
      contentType: "application/json",
      body: JSON.stringify({ ...info, counts: { messages: messages.length, events: events.length } }),
    };
  };
  return { answer, addRun };
}

describe("session viewer", () => {
  it("asks for the token once and keeps it for the tab; lists sessions newest first", async () => {
    const older = await sessionOnWorkspace("older session");
    const newer = await sessionOnWorkspace("newer session");
    const response = await page.goto(`${proxy.base}/`);
    // Served with its security headers: only this origin's scripts, no framing, no Referer.
    const headers = response.headers();
    assert.match(headers["content-security-policy"] ?? "", /script-src 'self';.*frame-ancestors 'none'/);
    assert.deepEqual([headers["x-frame-options"], headers["referrer-policy"]], ["DENY", "no-referrer"]);
    await page.waitForSelector("#auth:not([hidden])");
    await page.fill("#auth-token", TOKEN);
    await page.click("#auth button[type=submit]");
    await page.waitForSelector(`#session-list a[data-session-id="${newer}"]`);
    const listed = await page.$$eval("#session-list a", (links) => links.map((a) => a.dataset.sessionId));
    assert.ok(listed.indexOf(newer) < listed.indexOf(older));
    assert.equal(await page.evaluate(() => sessionStorage.getItem("pi-harness-token")), TOKEN);
    // A reload does not ask again.
    await page.reload();
    await page.waitForSelector(`#session-list a[data-session-id="${newer}"]`);
    assert.equal(await page.isVisible("#auth"), false);
  });

  it("shows a finished session: denial highlighted, tool results, diff and token usage", async () => {
    const sessionId = await sessionOnWorkspace("history");
    await runToEnd(sessionId, { text: 'TOOL write {"path":"a.txt","content":"denied\\n"}' });
    await runToEnd(sessionId, { text: 'TOOL write {"path":"a.txt","content":"changed\\n"}', allowWrite: true });
    await runToEnd(sessionId, { text: 'TOOL read {"path":"long.txt"}' });
    await page.goto(`${proxy.base}/#/s/${sessionId}`);
    await page.waitForSelector("#timeline .run-end");
    await page.waitForSelector("#changes:not([hidden])");
    const entries = await expectMatchesLog(sessionId);
    const tools = entries.filter((e) => e.kind === "tool");
    assert.deepEqual(
      tools.map((t) => t.status),
      ["denied", "ok", "ok"],
    );
    // A long result starts collapsed; short arguments and results start open.
    const open = await page.$$eval("#timeline .tool details", (all) => all.map((d) => [d.querySelector("summary").textContent, d.open]));
    assert.deepEqual(open, [
      ["arguments", true],
      ["arguments", true],
      ["result", true],
      ["arguments", true],
      ["result", false],
    ]);
    assert.match(tools[2].result, /line 40/);
    assert.match(tools[0].result, /denied: write_not_allowed/);
    assert.match(tools[1].result, /Successfully wrote/);
    assert.match(await page.textContent("#diff .add"), /^\+changed/);
    assert.match(await page.textContent("#timeline .run-end .usage"), /tokens 20 in · 10 out · 30 total \(2 model calls\)/);
    assert.equal(await page.$$eval("#timeline .run-end", (all) => all.length), 3);
    await page.screenshot({ path: path.join(RESULTS, "viewer-history.png"), fullPage: true });
  });

  it("writes out the format characters of a tool call, its result and its trace line: a hidden override cannot disguise a file (hunt 68)", async () => {
    const sessionId = await sessionOnWorkspace("spoof");
    // Shown raw, `run\u202egnp.sh` reads as `runhs.png`.
    await runToEnd(sessionId, { text: 'TOOL read {"path":"run\u202egnp.sh"}' });
    // A denied write is attributed: its artifact is the path (hunt 115: the panel showed it raw).
    await runToEnd(sessionId, { text: 'TOOL write {"path":"run\u202egnp.sh","content":"x"}' });
    await page.goto(`${proxy.base}/#/s/${sessionId}`);
    await page.waitForFunction(() => document.querySelectorAll("#timeline .run-end").length === 2);
    assert.match(await page.textContent("#timeline .tool .args pre"), /"path": "run<U\+202E>gnp\.sh"/);
    assert.match(await page.textContent("#timeline .tool .result"), /run<U\+202E>gnp\.sh/);
    await page.waitForSelector("#learning:not([hidden])");
    const trace = await page.$$eval("#trace-list li", (items) => items.map((li) => li.textContent));
    assert.ok(
      trace.some((line) => line.includes("run<U+202E>gnp.sh")),
      trace.join("\n"),
    );
    assert.ok(!trace.some((line) => line.includes("\u202e")), trace.join("\n"));
    const attributions = await page.textContent("#attribution-list");
    assert.match(attributions, /artifacts: run<U\+202E>gnp\.sh/);
    assert.ok(!attributions.includes("\u202e"), attributions);
  });

  it("renders a live run as it streams, and resumes after a forced disconnect with nothing lost or doubled", async () => {
    const sessionId = await sessionOnWorkspace("live run");
    await page.goto(`${proxy.base}/#/s/${sessionId}`);
    await page.waitForSelector("#session[data-status=idle]");
    // Watch the connection badge for the whole run.
    await page.evaluate(() => {
      window.connectionStates = [];
      new MutationObserver(() => window.connectionStates.push(document.getElementById("connection").dataset.state)).observe(
        document.getElementById("connection"),
        { attributes: true },
      );
    });
    await page.fill("#prompt-text", "SLOW 40 100");
    await page.click("#prompt button[type=submit]");

    // Incremental: the answer's text grows while the run streams.
    const seen = [];
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const text = (await page.textContent("#timeline .assistant .text").catch(() => null)) ?? "";
      if (text !== "" && text !== seen.at(-1)) seen.push(text);
      if (seen.length >= 4) break;
      await page.waitForTimeout(150);
    }
    assert.ok(seen.length >= 4, `the text did not grow step by step: ${JSON.stringify(seen)}`);
    for (let i = 1; i < seen.length; i++) assert.ok(seen[i].startsWith(seen[i - 1]) && seen[i].length > seen[i - 1].length);

    // Cut the page's event stream (its one EventSource) mid-run; the page must resume where it was.
    // The prompt's own POST stream, which the page cancels, is left alone: its close may not have
    // reached the proxy yet. (One CI run counted two streams here without saying which; the message
    // lists them now, and two EventSources still fail.)
    const open = proxy.openStreams;
    assert.equal(
      proxy.dropStreams((s) => s.method === "GET" && s.url.includes("/events/stream")),
      1,
      `open: ${open}`,
    );
    await page.waitForSelector("#timeline .run-end", { timeout: 30_000 });
    const states = await page.evaluate(() => window.connectionStates);
    assert.ok(states.includes("reconnecting"), `states: ${states}`);
    assert.ok(states.lastIndexOf("live") > states.indexOf("reconnecting"), `states: ${states}`);
    await page.waitForFunction(() => !document.querySelector("#timeline .user .text")?.textContent.includes("…"));
    const entries = await expectMatchesLog(sessionId);
    const answer = entries.find((e) => e.kind === "assistant");
    assert.equal(answer.text, Array.from({ length: 40 }, (_, i) => `tick ${i} `).join(""));
    await page.screenshot({ path: path.join(RESULTS, "viewer-live.png"), fullPage: true });
  });

  it("shows the failure-learning side: attributions, the trace, and the brief a later run was given", async () => {
    const sessionId = await sessionOnWorkspace("learning");
    const denied = { text: 'TOOL write {"path":"a.txt","content":"again\\n"}' };
    await runToEnd(sessionId, denied);
    // The failure becomes a case in the project (handed over after the run); the next run is denied the same tool.
    for (let i = 0; i < 50; i++) {
      const { cases } = await (await api("GET", "/api/projects/p_default/cases")).json();
      if (cases.some((c) => c.applicability.tools.includes("write"))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    await runToEnd(sessionId, denied);
    const events = await jsonl(`/api/sessions/${sessionId}/events`);
    const brief = events.find((e) => e.type === "brief_injected");
    assert.ok(brief, `no brief: ${events.map((e) => e.type)}`);

    await page.goto(`${proxy.base}/#/s/${sessionId}`);
    await page.waitForSelector("#learning:not([hidden])");
    await expectMatchesLog(sessionId);
    // The brief's entry shows the cases' prevention hints, not just their ids.
    await page.waitForFunction(() => document.querySelector("#timeline .brief li")?.textContent.includes("seen"));
    const hint = await page.textContent("#timeline .brief li");
    const { case: found } = await (await api("GET", `/api/projects/p_default/cases/${brief.caseIds[0]}`)).json();
    assert.ok(hint.startsWith(found.preventionHint), hint);
    // And the words exactly as the run was given them.
    assert.equal(await page.textContent("#timeline .brief .brief-text pre"), brief.text);
    assert.ok(brief.text.includes(found.preventionHint), brief.text);
    // Each denial was judged and attributed (a policy failure), and the trace shows it step by step.
    const attributions = await page.$$eval("#attribution-list > li", (items) => items.map((li) => li.dataset.classification));
    const stored = (await (await api("GET", `/api/sessions/${sessionId}/attributions`)).json()).attributions;
    assert.deepEqual(
      attributions,
      stored.map((a) => a.classification),
    );
    assert.ok(attributions.includes("policy"), `${attributions}`);
    await page.click("#trace-panel > summary");
    const types = new Set(await page.$$eval("#trace-list li", (items) => items.map((li) => li.dataset.traceType)));
    for (const type of ["span_start", "action", "observation", "judge_result", "attribution", "memory_read", "span_end"])
      assert.ok(types.has(type), `trace type ${type} missing: ${[...types]}`);
    assert.equal(await page.textContent("#trace-count"), String((await jsonl(`/api/sessions/${sessionId}/trace`)).length));
    await page.$$eval("#trace-list details", (all) => {
      for (const d of all) d.open = true;
    });
    await page.screenshot({ path: path.join(RESULTS, "viewer-learning.png"), fullPage: true });
  });

  it("picks up a run started elsewhere (a terminal) while the page is open", async () => {
    const sessionId = await sessionOnWorkspace("started elsewhere");
    await page.goto(`${proxy.base}/#/s/${sessionId}`);
    await page.waitForSelector("#session[data-status=idle]");
    // Longer than the page's idle poll (3 s), so the page finds the run while it streams.
    const run = runToEnd(sessionId, { text: "SLOW 60 100" });
    await page.waitForSelector("#timeline .assistant[data-state=streaming]", { timeout: 10_000 });
    await run;
    await page.waitForSelector("#timeline .run-end", { timeout: 10_000 });
    await expectMatchesLog(sessionId);
  });

  it("leaving a session for the list while its messages are being read leaves the timeline untouched", async () => {
    const sessionId = await sessionOnWorkspace("left mid-read");
    await openIdle(sessionId);
    // The read of the messages a finished run implies is held until the page has gone back to the list.
    const messages = new RegExp(`/api/sessions/${sessionId}/messages$`);
    let release;
    const released = new Promise((resolve) => {
      release = resolve;
    });
    let asked;
    const askedFor = new Promise((resolve) => {
      asked = resolve;
    });
    await page.route(messages, async (route) => {
      if (route.request().method() !== "GET") return route.continue();
      asked();
      await released;
      await route.continue();
    });
    try {
      await runToEnd(sessionId, { text: "run while the page watches" });
      await askedFor; // the idle poll found the run, and its end scheduled the read
      await page.evaluate(() => {
        location.hash = "#/";
        window.writesAfterLeaving = 0;
        new MutationObserver((records) => {
          window.writesAfterLeaving += records.length;
        }).observe(document.getElementById("timeline"), { subtree: true, childList: true, characterData: true, attributes: true });
      });
      release();
      await page.waitForResponse(messages);
      await page.waitForTimeout(300);
      assert.equal(await page.evaluate(() => window.writesAfterLeaving), 0);
    } finally {
      release();
      await page.unroute(messages);
    }
  });

  it("reads a session's messages again after 429 too_many_downloads, once its Retry-After has passed", async () => {
    const sessionId = await sessionOnWorkspace("exports busy");
    await runToEnd(sessionId, { text: 'TOOL read {"path":"a.txt"}' });
    const messages = new RegExp(`/api/sessions/${sessionId}/messages$`);
    const answers = [];
    await page.route(messages, (route) => {
      if (route.request().method() !== "GET") return route.continue();
      answers.push([answers.length === 0 ? 429 : "server", Date.now()]);
      if (answers.length > 1) return route.continue();
      return route.fulfill({
        status: 429,
        contentType: "application/json",
        headers: { "retry-after": "1" },
        body: JSON.stringify({ error: { code: "too_many_downloads", message: "serving 4", requestId: "r_busy" } }),
      });
    });
    try {
      await page.goto(`${proxy.base}/#/s/${sessionId}`);
      await page.waitForSelector("#timeline .run-end");
      const tools = (await expectMatchesLog(sessionId)).filter((e) => e.kind === "tool");
      assert.deepEqual(
        tools.map((t) => t.status),
        ["ok"],
      );
      assert.match(tools[0].result, /hello/);
      assert.deepEqual(
        answers.map(([answer]) => answer),
        [429, "server"],
      );
      assert.ok(answers[1][1] - answers[0][1] >= 1000, `asked again after ${answers[1][1] - answers[0][1]} ms`);
    } finally {
      await page.unroute(messages);
    }
  });

  it("opens a 300-run session at once; a new run recomputes its own token usage only", async () => {
    // The log of a long session, served to the page as the API would (building 300 real runs takes minutes).
    const sessionId = "s_synthetic300";
    const log = syntheticSession(sessionId, 300);
    const logRoute = new RegExp(`/api/sessions/${sessionId}(/[a-z]+)?(\\?.*)?$`);
    const reads = [];
    await page.route(logRoute, (route) => {
      reads.push(new URL(route.request().url()));
      return route.fulfill(log.answer(route.request().url()));
    });
    try {
      await page.goto(`${proxy.base}/#/`);
      await page.waitForSelector("#session-list a");
      // Every write of a run's token line, from here on.
      await page.evaluate(() => {
        window.usageWrites = 0;
        new MutationObserver((records) => {
          for (const r of records) if (r.target.matches?.(".run-end .usage")) window.usageWrites++;
        }).observe(document.getElementById("timeline"), { subtree: true, childList: true, characterData: true });
      });
      const opened = Date.now();
      await page.evaluate((id) => {
        location.hash = `#/s/${id}`;
      }, sessionId);
      await page.waitForFunction(() => document.querySelectorAll("#timeline .run-end").length === 300, null, { timeout: 60_000 });
      await page.waitForSelector("#session[data-status=idle]");
      const openMs = Date.now() - opened;
      const usage = () => page.$$eval("#timeline .run-end .usage", (all) => all.map((u) => u.textContent));
      const shown = await usage();
      assert.equal(shown[0], " · tokens 1,000 in · 5 out · 1,005 total (1 model call)");
      assert.equal(shown[299], " · tokens 1,299 in · 5 out · 1,304 total (1 model call)");
      assert.equal(await page.evaluate(() => window.usageWrites), 300);

      // One more run, found by the idle poll; the page must not stall while it is shown.
      await page.evaluate(() => {
        window.maxGap = 0;
        let last = performance.now();
        const tick = () => {
          const now = performance.now();
          window.maxGap = Math.max(window.maxGap, now - last);
          last = now;
          window.ticker = setTimeout(tick, 20);
        };
        tick();
      });
      reads.length = 0;
      log.addRun();
      await page.waitForFunction(() => document.querySelector("#timeline > li:last-child .usage")?.textContent.includes("1,300 in"), null, {
        timeout: 60_000,
      });
      // The new run's records were read as what came after those shown, never the whole log again.
      const logReads = reads.filter((u) => /\/(messages|events)$/.test(u.pathname));
      assert.ok(logReads.length > 0, "the new run's messages and events were read");
      assert.deepEqual(
        logReads.filter((u) => !(Number(u.searchParams.get("after")) > 0)).map((u) => u.pathname + u.search),
        [],
      );
      await page.waitForTimeout(500);
      assert.equal((await usage())[300], " · tokens 1,300 in · 5 out · 1,305 total (1 model call)");
      assert.equal(await page.evaluate(() => window.usageWrites), 301);
      const stall = await page.evaluate(() => {
        clearTimeout(window.ticker);
        return Math.round(window.maxGap);
      });
      console.log(`# 300-run session: shown after ${openMs} ms; the 301st run stalled the page ${stall} ms at most`);
    } finally {
      await page.unroute(logRoute);
    }
  });

  it("opens a 1,000-run session a batch at a time, reading each case of its briefs once (hunt 106)", async () => {
    // Built in one task, 10,000 messages held the tab for 3 s; each brief read its cases afresh, all at
    // once: 300 runs of a 5-case brief made 1,510 reads, and the browser refused a hundred of them.
    const sessionId = "s_synthetic1000";
    const caseIds = ["cs_1", "cs_2", "cs_3", "cs_4", "cs_5"];
    const log = syntheticSession(sessionId, 1000, { projectId: "p_briefs", briefCases: caseIds, compactedRuns: 1 });
    const logRoute = new RegExp(`/api/sessions/${sessionId}(/[a-z]+)?(\\?.*)?$`);
    const caseRoute = /\/api\/projects\/p_briefs\/cases\/(cs_\d)$/;
    const caseReads = [];
    await page.route(logRoute, (route) => route.fulfill(log.answer(route.request().url())));
    await page.route(caseRoute, (route) => {
      const caseId = caseRoute.exec(new URL(route.request().url()).pathname)[1];
      caseReads.push(caseId);
      const found = { id: caseId, preventionHint: `Hint of ${caseId}.`, occurrences: 2 };
      return route.fulfill({ status: 200, contentType: "application/json", body: JSON.stringify({ case: found }) });
    });
    try {
      await page.goto(`${proxy.base}/#/`);
      await page.waitForSelector("#session-list a");
      // How many runs were shown each time the page got a turn while the session opened.
      await page.evaluate(() => {
        window.seenRuns = [];
        const tick = () => {
          window.seenRuns.push(document.querySelectorAll("#timeline .run-end").length);
          window.ticker = setTimeout(tick, 0);
        };
        tick();
      });
      await page.evaluate((id) => {
        location.hash = `#/s/${id}`;
      }, sessionId);
      await page.waitForFunction(() => document.querySelectorAll("#timeline .run-end").length === 1000, null, { timeout: 60_000 });
      await page.waitForSelector("#session[data-status=idle]");
      const seen = await page.evaluate(() => {
        clearTimeout(window.ticker);
        return window.seenRuns;
      });
      // From when the last session's entries were gone (the page showed the 300-run session before).
      const building = seen.slice(seen.indexOf(0));
      assert.ok(
        seen.includes(0) && building.some((n) => n > 0 && n < 1000),
        `the page had turns while the runs were being built (runs seen at each turn: ${[...new Set(seen)].join(", ")})`,
      );
      const hint = (caseId) => `Hint of ${caseId}. (${caseId}, seen 2×)`;
      await page.waitForFunction(
        (expected) => [...document.querySelectorAll("#timeline .brief .hints")].every((ul) => ul.textContent === expected),
        caseIds.map(hint).join(""),
        { timeout: 30_000 },
      );
      assert.equal(await page.$$eval("#timeline .brief .hints", (all) => all.length), 1000);
      // The first run compacted the history: its summary call counts toward its tokens (hunt 106).
      const usage = await page.$$eval("#timeline .run-end .usage", (all) => all.slice(0, 2).map((u) => u.textContent));
      assert.deepEqual(usage, [
        " · tokens 1,010 in · 10 out · 1,020 total (2 model calls)",
        " · tokens 1,001 in · 5 out · 1,006 total (1 model call)",
      ]);
      assert.deepEqual([...caseReads].sort(), caseIds);
    } finally {
      await page.unroute(logRoute);
      await page.unroute(caseRoute);
    }
  });

  it("counts a steer message's model call in the run that took it", async () => {
    const sessionId = await sessionOnWorkspace("steered");
    await openIdle(sessionId);
    await sendFromPage("SLOW 15 200");
    await runToEnd(sessionId, { text: "and also this", whenBusy: "steer" });
    const expected = " · tokens 20 in · 10 out · 30 total (2 model calls)";
    await page.waitForFunction((text) => document.querySelector("#timeline .run-end .usage")?.textContent === text, expected, {
      timeout: 10_000,
    });
    await page.reload();
    await page.waitForSelector("#session[data-status=idle]");
    assert.equal(await page.textContent("#timeline .run-end .usage"), expected);
    const entries = await expectMatchesLog(sessionId);
    assert.deepEqual(
      entries.filter((e) => e.kind === "user").map((e) => e.text),
      ["SLOW 15 200", "and also this"],
    );
  });

  it("shows a diff's first 50,000 lines of 150,000 and counts the rest, and says so when the changes cannot be read", async () => {
    const sessionId = await sessionOnWorkspace("huge diff");
    const lines = Array.from({ length: 150_000 }, (_, i) => `-line ${i}`);
    const diff = `diff --git a/big.txt b/big.txt\n--- a/big.txt\n+++ b/big.txt\n@@ -1,150000 +1,1 @@\n${lines.join("\n")}\n+short\n`;
    const changes = new RegExp(`/api/sessions/${sessionId}/changes$`);
    await page.route(changes, (route) => route.fulfill({ status: 200, contentType: "text/plain", body: diff }));
    await openIdle(sessionId);
    await page.waitForSelector("#changes:not([hidden])");
    const shown = await page.$eval("#diff", (pre) => ({
      lines: pre.querySelectorAll(".line").length,
      dels: pre.querySelectorAll(".del").length,
      text: pre.textContent,
    }));
    // One element a line froze the tab for 7 s at 600,000 lines (hunt 68): the first 50,000, then a count.
    const kept = diff.split("\n").slice(0, 50_000);
    assert.deepEqual(shown, {
      lines: 50_001,
      dels: 49_996,
      text: `${kept.join("\n")}\n[100,006 more lines not shown: GET /api/sessions/<id>/changes gives the whole diff]\n`,
    });
    assert.equal(await page.isVisible("#changes-error"), false);

    await page.unroute(changes);
    await page.route(changes, (route) =>
      route.fulfill({
        status: 500,
        contentType: "application/json",
        body: JSON.stringify({ error: { code: "internal", message: "boom" } }),
      }),
    );
    await page.reload();
    await page.waitForSelector("#changes-error:not([hidden])");
    assert.equal(await page.textContent("#changes-error"), "The changes could not be shown: internal: boom");
    assert.equal(await page.isVisible("#changes h2"), true);
    await page.unroute(changes);
  });

  it("renders 130,000 attributions and trace runs (more than one call can take arguments)", async () => {
    const shown = await page.evaluate(async () => {
      const { renderLearning } = await import("/js/learning.js");
      const section = document.getElementById("learning").cloneNode(true);
      const n = 130_000;
      const attributions = Array.from({ length: n }, (_, i) => ({
        judgeName: "j",
        failureKind: `k${i}`,
        classification: "policy",
        sourceActionIds: [],
        rule: "r",
        artifactRefs: [],
        memoryReadNodeIds: [],
      }));
      const trace = Array.from({ length: n }, (_, i) => ({ type: "span_start", kind: "run", runId: `r_${i}` }));
      renderLearning(section, { trace, attributions });
      return [section.querySelectorAll(".attribution").length, section.querySelectorAll("details.trace-run").length];
    });
    assert.deepEqual(shown, [130_000, 130_000]);
  });

  it("shows the prompt and usage of a run that ended while the page was loading", async () => {
    const sessionId = await sessionOnWorkspace("load race");
    await runToEnd(sessionId, { text: "first" });
    const events = new RegExp(`/api/sessions/${sessionId}/events$`);
    // A slow /events answer: a terminal runs a prompt meanwhile.
    let held = false;
    await page.route(events, async (route) => {
      if (!held) {
        held = true;
        await runToEnd(sessionId, { text: "second prompt from a terminal" });
      }
      await route.continue();
    });
    await openIdle(sessionId);
    await page.waitForFunction(() => document.querySelectorAll("#timeline .run-end").length === 2);
    await page.waitForFunction(() => [...document.querySelectorAll("#timeline .user .text")].every((t) => t.textContent !== "…"), null, {
      timeout: 5000,
    });
    const entries = await expectMatchesLog(sessionId);
    assert.deepEqual(
      entries.filter((e) => e.kind === "user").map((e) => e.text),
      ["first", "second prompt from a terminal"],
    );
    await page.waitForFunction(() => document.querySelectorAll("#timeline .run-end .usage:not(:empty)").length === 2);
    assert.deepEqual(await page.$$eval("#timeline .run-end .usage", (all) => all.map((u) => u.textContent)), [
      " · tokens 10 in · 5 out · 15 total (1 model call)",
      " · tokens 10 in · 5 out · 15 total (1 model call)",
    ]);
    await page.unroute(events);
  });

  it("after a token stops working mid-run, one prompt resumes every request that was refused", async () => {
    const sessionId = await sessionOnWorkspace("token revoked");
    await openIdle(sessionId);
    assert.match(await page.textContent("#session-meta"), / · idle · 0 messages · /);
    await page.check("#allow-write");
    await sendFromPage("SLOW 20 100");
    await page.uncheck("#allow-write");
    // The stream goes on with its stream token; every read the run's events cause is refused (401).
    await page.evaluate(() => sessionStorage.setItem("pi-harness-token", "tok-revoked"));
    // A steer from a terminal makes the run write a file, so its changes are read too.
    await runToEnd(sessionId, { text: 'TOOL write {"path":"a.txt","content":"steered\\n"}', whenBusy: "steer" });
    let info;
    do info = await (await api("GET", `/api/sessions/${sessionId}`)).json();
    while (info.status !== "idle");
    await page.waitForSelector("#auth:not([hidden])", { timeout: 10_000 });
    assert.equal(await page.textContent("#auth-error"), "That token was not accepted.");
    await page.fill("#auth-token", TOKEN);
    await page.click("#auth button[type=submit]");
    // Each refused read ran again: the messages (the run's tokens), the header, the changes, the trace.
    const usage = " · tokens 30 in · 15 out · 45 total (3 model calls)";
    await page.waitForFunction((text) => document.querySelector("#timeline .run-end .usage")?.textContent === text, usage);
    await page.waitForFunction(
      (meta) => document.getElementById("session-meta").textContent.includes(meta),
      ` · idle · ${info.counts.messages} messages · `,
    );
    await page.waitForFunction(() => document.querySelector("#diff .add")?.textContent === "+steered\n");
    const trace = await jsonl(`/api/sessions/${sessionId}/trace`);
    await page.waitForFunction((n) => document.getElementById("trace-count").textContent === String(n), trace.length);
    // The feed's own refused look ran again too: it found the run over.
    await page.waitForSelector("#connection[data-state=idle]", { state: "attached" });
    assert.equal(await page.isVisible("#auth"), false);
  });

  it("while idle: a revoked token asks for a new one, and a deleted session stops the feed and says so", async () => {
    const sessionId = await sessionOnWorkspace("deleted elsewhere");
    await runToEnd(sessionId, { text: "hi" });
    await openIdle(sessionId);
    await page.evaluate(() => sessionStorage.setItem("pi-harness-token", "tok-revoked"));
    await page.waitForSelector("#auth:not([hidden])", { timeout: 10_000 });
    await page.fill("#auth-token", TOKEN);
    await page.click("#auth button[type=submit]");

    const looks = [];
    page.on("request", (r) => {
      if (r.url().endsWith(`/api/sessions/${sessionId}`)) looks.push(r.method());
    });
    await api("DELETE", `/api/sessions/${sessionId}`);
    await page.waitForSelector("#connection[data-state=deleted]", { timeout: 10_000 });
    assert.equal(await page.textContent("#connection"), "session deleted");
    assert.equal(await page.textContent("#session-meta"), `${sessionId} · deleted: this session no longer exists`);
    // The feed stopped: no more looks after the one that was told 404 (which may have been sent
    // before the listener was, as in one CI run: then none is seen).
    const told = [...looks];
    assert.ok(told.length <= 1 && told.every((m) => m === "GET"), `looks before the deletion was shown: ${told}`);
    await page.waitForTimeout(4000);
    assert.deepEqual(looks, told);
    assert.equal(await page.isVisible("#auth"), false);
  });

  it("wraps a long title without a space instead of widening the page", async () => {
    const sessionId = await sessionOnWorkspace("build_".repeat(33));
    await openIdle(sessionId);
    const sizes = await page.evaluate(() => ({
      page: document.documentElement.scrollWidth,
      titleRight: Math.ceil(document.getElementById("session-title").getBoundingClientRect().right) <= innerWidth,
      title: document.getElementById("session-title").textContent.length,
    }));
    assert.deepEqual(sizes, { page: 1280, titleRight: true, title: 198 });
  });

  it("shows every call of an imported history that numbers its calls from call_0 each turn (hunt 45)", async () => {
    const at = (i) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString();
    const mk = (o, i, parentId) => ({ ...o, id: `m_${i}`, sessionId: "s_x", parentId, createdAt: at(i) });
    // Message i reads `path` as call_0 (every turn numbers its calls from call_0); message i + 1 answers it.
    const readTurn = (i, path, resultText) => [
      mk(
        { kind: "assistant", text: "", stopReason: "TOOL_CALLS", toolCalls: [{ id: "call_0", name: "read", arguments: { path } }] },
        i,
        `m_${i - 1}`,
      ),
      mk({ kind: "tool_result", toolCallId: "call_0", toolName: "read", resultText, error: false }, i + 1, `m_${i}`),
    ];
    const lines = [
      mk({ kind: "user", text: "look twice" }, 1, null),
      ...readTurn(2, "a.txt", "FIRST RESULT"),
      ...readTurn(4, "b.txt", "SECOND RESULT"),
      mk({ kind: "assistant", text: "both read", stopReason: "STOP" }, 6, "m_5"),
    ];
    const body = lines.map((l) => JSON.stringify(l)).join("\n");
    const { sessionId } = await (await api("POST", "/api/sessions/import", body, "application/x-ndjson")).json();
    await openIdle(sessionId);
    const tools = (await timelineOf()).filter((e) => e.kind === "tool");
    assert.deepEqual(
      tools.map((e) => [e.key, e.content.includes("a.txt"), e.content.includes("b.txt"), e.result]),
      [
        ["c:call_0", true, false, "resultFIRST RESULT"],
        ["c:call_0@m_4", false, true, "resultSECOND RESULT"],
      ],
    );
  });

  it("at phone width the session takes the page's width, with no sideways scroll (hunt 45)", async () => {
    const sessionId = await sessionOnWorkspace("narrow");
    await runToEnd(sessionId, { text: "hello world" });
    await page.setViewportSize({ width: 375, height: 740 });
    try {
      await openIdle(sessionId);
      const sizes = await page.evaluate(() => ({
        page: document.documentElement.scrollWidth,
        main: Math.round(document.querySelector("main").getBoundingClientRect().width),
        timeline: Math.round(document.getElementById("timeline").getBoundingClientRect().width) >= 320,
      }));
      assert.deepEqual(sizes, { page: 375, main: 375, timeline: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it("keeps a trace run open when another run ends", async () => {
    const sessionId = await sessionOnWorkspace("trace open");
    await runToEnd(sessionId, { text: 'TOOL read {"path":"missing.txt"}' });
    await openIdle(sessionId);
    await page.waitForSelector("#learning:not([hidden])");
    await page.click("#trace-panel > summary");
    await page.click("#trace-list details.trace-run > summary");
    await runToEnd(sessionId, { text: "another run from a terminal" });
    await page.waitForFunction(() => document.querySelectorAll("#trace-list details.trace-run").length === 2, null, { timeout: 10_000 });
    const runs = (await jsonl(`/api/sessions/${sessionId}/events`)).filter((e) => e.type === "agent_started").map((e) => e.runId);
    const open = await page.$$eval("#trace-list details.trace-run", (all) =>
      all.map((d) => [d.querySelector("summary").textContent.split(" ")[1], d.open]),
    );
    assert.deepEqual(open, [
      [runs[0], true],
      [runs[1], false],
    ]);
  });

  it("shows queue and retry events as short lines, not raw JSON", async () => {
    const sessionId = await sessionOnWorkspace("follow-up");
    await openIdle(sessionId);
    await sendFromPage("SLOW 10 100");
    await runToEnd(sessionId, { text: "then this", whenBusy: "followUp" });
    await page.waitForFunction(() => document.querySelectorAll("#timeline .run-end .usage:not(:empty)").length === 2, null, {
      timeout: 10_000,
    });
    await expectMatchesLog(sessionId);
    const queued = (await jsonl(`/api/sessions/${sessionId}/events`)).find((e) => e.type === "message_queued");
    assert.deepEqual(await page.$$eval("#timeline .other", (all) => all.map((li) => li.textContent)), [
      `prompt queued as a follow-up (run ${queued.runId})`,
    ]);
    assert.deepEqual(await page.$$eval("#timeline .run-end .usage", (all) => all.map((u) => u.textContent)), [
      " · tokens 10 in · 5 out · 15 total (1 model call)",
      " · tokens 10 in · 5 out · 15 total (1 model call)",
    ]);
    // The kinds no fake model run produces, applied as events.
    const lines = await page.evaluate(async () => {
      const { Timeline } = await import("/js/timeline.js");
      const timeline = new Timeline(document.createElement("ol"));
      const base = { eventId: "ev", sessionId: "s_1", createdAt: "2025-01-01T00:00:00.000Z" };
      timeline.apply({ ...base, seq: 1, type: "message_queued", messageId: "m_2", mode: "steer", runId: "r_1", afterFailedRun: "keep" });
      timeline.apply({ ...base, seq: 2, type: "queue_updated", steering: ["m_2"], followUp: [] });
      timeline.apply({ ...base, seq: 3, type: "queued_message_withdrawn", messageId: "m_3", runId: "r_2", reason: "previous_run_failed" });
      timeline.apply({ ...base, seq: 4, type: "queued_message_withdrawn", messageId: "m_4", runId: "r_3", reason: "withdrawn_by_client" });
      timeline.apply({
        ...base,
        seq: 5,
        type: "model_retry",
        runId: "r_1",
        attempt: 1,
        maxAttempts: 3,
        delayMs: 1500,
        code: "rate_limited",
      });
      return [...timeline.list.children].map((li) => [li.dataset.key, li.textContent]);
    });
    assert.deepEqual(lines, [
      ["e:1", "prompt queued to steer (run r_1)"],
      ["e:3", "queued prompt withdrawn because the run before it failed (run r_2)"],
      ["e:4", "queued prompt withdrawn by the client (run r_3)"],
      ["e:5", "model call failed (rate_limited), attempt 1 of 3: retrying in 1.5 s"],
    ]);
  });

  it("lists each session once when 'more…' is clicked twice", async () => {
    // Sent again when wrangler dev cut it (it reloads the Worker when files in the tree change): a second copy of a session does no harm here.
    const create = (title) => api("POST", "/api/sessions", { title }).catch(() => api("POST", "/api/sessions", { title }));
    for (let i = 0; i < 60; i += 5) await Promise.all(Array.from({ length: 5 }, (_, j) => create(`listed ${i + j}`)));
    let total = 0;
    for (let cursor = null, first = true; first || cursor; first = false) {
      const listing = await (await api("GET", `/api/sessions?limit=100${cursor ? `&cursor=${cursor}` : ""}`)).json();
      total += listing.items.length;
      cursor = listing.nextCursor;
    }
    assert.ok(total > 60 && total <= 100, `${total} sessions`);
    // The second page answers slowly, so both clicks land while it loads.
    await page.route(/\/api\/sessions\?.*cursor=/, async (route) => {
      await new Promise((r) => setTimeout(r, 300));
      await route.continue();
    });
    await page.goto(`${proxy.base}/`);
    await page.waitForSelector("#more-sessions:not([hidden])");
    await page.dblclick("#more-sessions");
    await page.waitForSelector("#more-sessions[hidden]", { state: "attached" });
    const ids = await page.$$eval("#session-list a", (links) => links.map((a) => a.dataset.sessionId));
    assert.deepEqual([ids.length, new Set(ids).size], [total, total]);
    await page.unroute(/\/api\/sessions\?.*cursor=/);
  });

  it("the session list follows sessions made, renamed and deleted elsewhere, keeping the pages 'more…' read (hunt 45)", async () => {
    // Run after the test above: the list holds every page, more than one.
    const everyId = async () => {
      const ids = [];
      for (let cursor = null, first = true; first || cursor; first = false) {
        const listing = await (await api("GET", `/api/sessions?limit=100${cursor ? `&cursor=${cursor}` : ""}`)).json();
        ids.push(...listing.items.map((s) => s.id));
        cursor = listing.nextCursor;
      }
      return ids;
    };
    const shown = () => page.$$eval("#session-list a", (links) => links.map((a) => a.dataset.sessionId));
    assert.deepEqual(await shown(), await everyId());
    const [, renamed, deleted] = await shown();
    const made = (await (await api("POST", "/api/sessions", { title: "made in a terminal" })).json()).sessionId;
    await api("PATCH", `/api/sessions/${renamed}`, { title: "renamed in a terminal" });
    await api("DELETE", `/api/sessions/${deleted}`);
    await page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
    await page.waitForSelector(`#session-list a[data-session-id="${made}"]`);
    await page.waitForSelector(`#session-list a[data-session-id="${deleted}"]`, { state: "detached" });
    const expected = await everyId();
    assert.equal(expected[0], made);
    assert.deepEqual(await shown(), expected);
    assert.equal(await page.textContent(`#session-list a[data-session-id="${renamed}"]`), "renamed in a terminal");
    assert.equal(await page.isVisible("#more-sessions"), false);
    // Back online, the list is read again at once.
    const later = (await (await api("POST", "/api/sessions", { title: "made while offline" })).json()).sessionId;
    await page.evaluate(() => window.dispatchEvent(new Event("online")));
    await page.waitForSelector(`#session-list a[data-session-id="${later}"]`);
    assert.deepEqual(await shown(), await everyId());
  });

  it("the open session's heading follows a rename made elsewhere, without waiting for a run (hunt 58)", async () => {
    const { sessionId } = await (await api("POST", "/api/sessions", { title: "named here" })).json();
    await page.goto(`${proxy.base}/#/s/${sessionId}`);
    await page.waitForFunction(() => document.getElementById("session-title").textContent === "named here");
    await api("PATCH", `/api/sessions/${sessionId}`, { title: "renamed in a terminal" });
    await page.evaluate(() => document.dispatchEvent(new Event("visibilitychange")));
    await page.waitForFunction(() => document.getElementById("session-title").textContent === "renamed in a terminal");
    assert.equal(await page.textContent(`#session-list a[data-session-id="${sessionId}"]`), "renamed in a terminal");
  });

  it("fills an assistant entry from a message stored before its events, and does not double the replayed deltas", async () => {
    const shown = await page.evaluate(async () => {
      const { Timeline } = await import("/js/timeline.js");
      const list = document.createElement("ol");
      const view = new Timeline(list);
      const base = { sessionId: "s_x", createdAt: "2026-12-02T00:00:00.000Z" };
      view.apply({ ...base, type: "agent_started", runId: "r_1", seq: 1 });
      view.apply({ ...base, type: "user_message_appended", messageId: "m_u", seq: 2 });
      // A refresh overtook the stream (it was reconnecting): the answer is stored before its events arrive.
      view.setMessage({ ...base, kind: "user", id: "m_u", parentId: null, text: "hi" });
      const usage = { inputTokens: 3, outputTokens: 2, totalTokens: 5 };
      view.setMessage({ ...base, kind: "assistant", id: "m_a", parentId: "m_u", text: "hello there", stopReason: "STOP", usage });
      view.apply({ ...base, type: "assistant_delta", messageId: "m_a", text: "hello ", seq: 3 });
      view.apply({ ...base, type: "assistant_delta", messageId: "m_a", text: "there", seq: 4 });
      view.apply({ ...base, type: "assistant_completed", messageId: "m_a", stopReason: "STOP", seq: 5 });
      const li = list.querySelector(".entry.assistant");
      return [li.querySelector(".text").textContent, li.querySelector(".usage").textContent, li.dataset.empty];
    });
    assert.deepEqual(shown, ["hello there", "3 in · 2 out · 5 total", "false"]);
  });

  it("a server without STREAM_TOKEN_SECRET: a run sent from the page streams in over the bearer token, and the page says why (hunt 28)", async () => {
    // What such a server answers (this one has the secret, so its answer is stood in for).
    const tokens = /\/stream-token$/;
    const unconfigured = {
      error: {
        code: "stream_token_unconfigured",
        message: "stream tokens need STREAM_TOKEN_SECRET, a secret of at least 32 characters",
      },
    };
    await page.route(tokens, (route) =>
      route.fulfill({ status: 500, contentType: "application/json", body: JSON.stringify(unconfigured) }),
    );
    let onRequest = () => {};
    try {
      const sessionId = await sessionOnWorkspace("no stream secret");
      await openIdle(sessionId);
      await page.evaluate(() => {
        window.connectionStates = [];
        new MutationObserver(() => window.connectionStates.push(document.getElementById("connection").dataset.state)).observe(
          document.getElementById("connection"),
          { attributes: true },
        );
      });
      const streams = [];
      onRequest = (r) => {
        if (r.url().includes("/events/stream")) streams.push(new URL(r.url()).search);
      };
      page.on("request", onRequest);
      await sendFromPage("SLOW 30 100");
      // The prompt just sent, and the answer growing while the run streams.
      assert.equal(await page.$$eval("#timeline .user", (all) => all.length), 1);
      const seen = [];
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && seen.length < 3) {
        const text = (await page.textContent("#timeline .assistant .text").catch(() => null)) ?? "";
        if (text !== "" && text !== seen.at(-1)) seen.push(text);
        await page.waitForTimeout(150);
      }
      assert.ok(seen.length >= 3, `the text did not grow step by step: ${JSON.stringify(seen)}`);
      await page.waitForSelector("#timeline .run-end", { timeout: 30_000 });
      await expectMatchesLog(sessionId);
      const states = await page.evaluate(() => window.connectionStates);
      assert.ok(states.includes("live"), `states: ${states}`);
      assert.ok(!states.includes("offline") && !states.includes("error"), `states: ${states}`);
      assert.match(await page.textContent("#feed-note"), /^Live updates need STREAM_TOKEN_SECRET on the server/);
      assert.equal(await page.isVisible("#feed-note"), true);
      assert.ok(streams.length > 0 && streams.every((q) => !q.includes("token=")), `streams: ${streams}`);
    } finally {
      page.off("request", onRequest);
      await page.unroute(tokens);
    }
  });

  it("nothing the pages did was refused by the Content-Security-Policy, and no load asked for a missing icon", () => {
    assert.deepEqual(cspViolations, []);
    assert.deepEqual(faviconLoads, []);
  });
});
