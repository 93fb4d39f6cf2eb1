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
  // Anything the page's Content-Security-Policy refused (public/_headers): checked by the last test.
  page.on("console", (msg) => {
    if (msg.type() === "error" && /Content Security Policy/i.test(msg.text())) cspViolations.push(msg.text());
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
  assert.ok(res.ok, `${method} ${urlPath}: ${res.status}`);
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
    const key =
      e.type === "agent_started"
        ? `run:${e.runId}`
        : e.type === "agent_completed" || e.type === "agent_error"
          ? `end:${e.runId}`
          : e.type === "brief_injected"
            ? `brief:${e.runId}`
            : e.type.startsWith("tool_call_")
              ? `c:${e.callId}`
              : `m:${e.messageId}`;
    if (!expectedKeys.includes(key)) expectedKeys.push(key);
  }
  assert.deepEqual(keys, expectedKeys);
  return entries;
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

  it("nothing the pages did was refused by the Content-Security-Policy", () => {
    assert.deepEqual(cspViolations, []);
  });
});
