// The terminal client against `wrangler dev` (auth on) with the fake model of the black-box
// checks, through a proxy that can cut event streams. Run by `npm run test:client`.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { main } from "../../client/cli.mjs";
import { listWorkspaceFiles } from "../../client/pack.mjs";
import { freePort, startDevServer } from "../../scripts/blackbox/dev-server.mjs";
import { startFakeModel } from "../../scripts/blackbox/fake-model.mjs";
import { startFlakyProxy } from "../../scripts/blackbox/flaky-proxy.mjs";

const TOKEN = "tok-client-test-0123456789";
let dev;
let model;
let proxy;
let stateDir;

before(async () => {
  model = await startFakeModel();
  stateDir = mkdtempSync(path.join(os.tmpdir(), "pi-client-"));
  dev = await startDevServer({
    port: await freePort(),
    persistTo: path.join(stateDir, "state"),
    modelUrl: `http://127.0.0.1:${model.port}/v1`,
    vars: { AUTH_TOKENS: `cli:${TOKEN}`, STREAM_TOKEN_SECRET: "a-client-test-secret-of-32-characters" },
  });
  proxy = await startFlakyProxy(dev.base);
});

after(async () => {
  await proxy?.close();
  await dev?.stop();
  model?.server.close();
  if (stateDir) rmSync(stateDir, { recursive: true, force: true });
});

/** Runs the client in-process; output is captured. */
async function cli(args, { token = TOKEN, url = dev.base, env = {}, cwd } = {}) {
  let stdout = "";
  let stderr = "";
  const code = await main(["--url", url, ...args], {
    stdout: { write: (s) => (stdout += s) },
    stderr: { write: (s) => (stderr += s) },
    env: { ...env, ...(token ? { PI_HARNESS_TOKEN: token } : {}) },
    cwd,
    reconnectDelayMs: 100,
  });
  return { code, stdout, stderr };
}

const api = async (urlPath) => {
  const res = await fetch(`${dev.base}${urlPath}`, { headers: { authorization: `Bearer ${TOKEN}` } });
  assert.equal(res.status, 200, `${urlPath}: ${res.status}`);
  return res;
};
/**
 * Runs the client with Ctrl-C in the test's hands: `interrupt()` presses it (`atOnce: "prompt"`: as
 * the prompt is sent, before its answer); its output is collected as it comes, and a leave at once
 * (`io.exit`) in `exited`. The client takes Ctrl-C twice: during its setup (pack, upload, session),
 * then for the run.
 */
function interruptible(args, { url = dev.base, atOnce = null } = {}) {
  const client = { stdout: "", stderr: "", exited: null, interrupt: () => {} };
  let subscriptions = 0;
  client.running = main(["--url", url, ...args], {
    stdout: { write: (s) => (client.stdout += s) },
    stderr: { write: (s) => (client.stderr += s) },
    env: { PI_HARNESS_TOKEN: TOKEN },
    reconnectDelayMs: 100,
    exit: (code) => {
      client.exited = code;
    },
    onInterrupt: (handler) => {
      client.interrupt = handler;
      if (++subscriptions === 2 && atOnce === "prompt") handler();
      return () => {
        client.interrupt = () => {};
      };
    },
  });
  return client;
}

/** Calls `before(url, init)` ahead of every request the client sends while `body` runs. */
async function watchingRequests(before, body) {
  const realFetch = globalThis.fetch;
  globalThis.fetch = (url, init) => {
    before(String(url), init ?? {});
    return realFetch(url, init);
  };
  try {
    return await body();
  } finally {
    globalThis.fetch = realFetch;
  }
}

/** Polls `check` every 50 ms for up to 10 s. */
async function waitFor(check) {
  for (let i = 0; i < 200; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("timed out waiting");
}
const sessionIdOf = (output) => /session (s_[A-Za-z0-9_-]+)/.exec(output)?.[1];

function workspaceDir() {
  const dir = path.join(stateDir, `ws-${Math.random().toString(36).slice(2)}`);
  mkdirSync(path.join(dir, "src"), { recursive: true });
  mkdirSync(path.join(dir, "node_modules", "dep"), { recursive: true });
  writeFileSync(path.join(dir, "a.txt"), "hello\n");
  writeFileSync(path.join(dir, "src", "main.ts"), "console.log('hi');\n");
  writeFileSync(path.join(dir, ".gitignore"), "dist/\n");
  mkdirSync(path.join(dir, "dist"));
  writeFileSync(path.join(dir, "dist", "main.js"), "built\n");
  writeFileSync(path.join(dir, ".env"), "SECRET=1\n");
  writeFileSync(path.join(dir, "node_modules", "dep", "index.js"), "dep\n");
  return dir;
}

describe("pi-harness run", () => {
  it("packs and uploads the workspace, streams the run, prints the diff and token usage", async () => {
    const dir = workspaceDir();
    const { code, stdout, stderr } = await cli([
      "run",
      "--workspace",
      dir,
      "--allow-write",
      'TOOL write {"path":"a.txt","content":"changed\\n"}',
    ]);
    assert.equal(code, 0, stderr);
    assert.match(stdout, /^packed 3 files /m);
    assert.match(stdout, /^✓ write \{"path":"a\.txt","content":"changed\\n"\} — /m);
    assert.match(stdout, /^done$/m);
    assert.match(stdout, /^-hello\n\+changed$/m);
    assert.match(stdout, /^tokens: 20 in · 10 out · 30 total \(2 model calls\)$/m);
    // Exactly the packed files reached the harness: no dist/, .env or node_modules/.
    const info = await (await api(`/api/sessions/${sessionIdOf(stdout)}`)).json();
    const workspace = await (await api(`/api/workspaces/${info.workspaceId}`)).json();
    assert.equal(workspace.files, 3);
    for (const file of [".env", "dist/main.js", "node_modules/dep/index.js"]) {
      const res = await fetch(`${dev.base}/api/workspaces/${info.workspaceId}/files/${file}`, {
        headers: { authorization: `Bearer ${TOKEN}` },
      });
      assert.equal(res.status, 404, file);
    }
  });

  it("reconnects with Last-Event-ID when the connection drops mid-run: every event once, in order", async () => {
    proxy.dropNextStreamAfter(4);
    const before = proxy.dropped;
    const { code, stdout, stderr } = await cli(["run", "--json", "SLOW 12 60"], { url: proxy.base });
    assert.equal(code, 0, stderr);
    assert.equal(proxy.dropped, before + 1);
    assert.match(stderr, /^reconnecting after event \d+: /m);
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    // The client's own line (no seq) names the session before the run's events.
    assert.deepEqual(Object.keys(lines[0]), ["type", "sessionId", "workspaceId", "created", "viewer"]);
    assert.equal(lines[0].type, "session");
    const events = lines.filter((line) => "seq" in line);
    assert.equal(events.length, lines.length - 1);
    const sessionId = lines[0].sessionId;
    const stored = (await (await api(`/api/sessions/${sessionId}/events`)).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(events, stored);
    const text = events.filter((e) => e.type === "assistant_delta").map((e) => e.text);
    assert.equal(text.join(""), Array.from({ length: 12 }, (_, i) => `tick ${i} `).join(""));
  });

  it("the readable output survives a drop too: the text appears once", async () => {
    proxy.dropNextStreamAfter(5);
    const { code, stdout } = await cli(["run", "SLOW 10 50"], { url: proxy.base });
    assert.equal(code, 0);
    const expected = Array.from({ length: 10 }, (_, i) => `tick ${i} `).join("");
    assert.equal(stdout.split(expected).length, 2, stdout);
  });

  it("shows a denied tool call; an agent_error exits non-zero", async () => {
    const dir = workspaceDir();
    const denied = await cli(["run", "--workspace", dir, 'TOOL write {"path":"a.txt","content":"x"}']);
    assert.equal(denied.code, 0);
    assert.match(denied.stdout, /^⊘ write \{"path":"a\.txt","content":"x"\} — denied: write_not_allowed$/m);
    assert.match(denied.stdout, /^no changes$/m);
    const failed = await cli(["run", "--model", "replay:s_nope", "hello"]);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^error: replay_load_failed: /m);
  });

  it("--session continues a session; sessions, show and changes read it back; the diff applies with git", async () => {
    const dir = workspaceDir();
    const first = await cli([
      "run",
      "--workspace",
      dir,
      "--allow-write",
      'TOOL write {"path":"src/new.ts","content":"export const n = 1;\\n"}',
    ]);
    assert.equal(first.code, 0, first.stderr);
    const sessionId = sessionIdOf(first.stdout);
    const seen = proxy.requests.length;
    const second = await cli(["run", "--session", sessionId, "and now?"], { url: proxy.base });
    assert.equal(second.code, 0, second.stderr);
    assert.equal(sessionIdOf(second.stdout), sessionId);
    assert.match(second.stdout, /^hello world$/m);
    // Its own run's tokens only, read from the messages stored since the run began (its agent_started).
    assert.match(second.stdout, /^tokens: 10 in · 5 out · 15 total \(1 model call\)$/m);
    const events = (await (await api(`/api/sessions/${sessionId}/events`)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const started = events.filter((e) => e.type === "agent_started").map((e) => e.seq);
    assert.equal(started.length, 2);
    const reads = proxy.requests.slice(seen).filter((r) => r.includes("/messages") && r.startsWith("GET "));
    assert.deepEqual(reads, [`GET /api/sessions/${sessionId}/messages?after=${started[1] - 1}`]);

    const listed = await cli(["sessions", "--limit", "3"]);
    assert.equal(listed.code, 0);
    assert.match(listed.stdout.split("\n")[0], new RegExp(`^${sessionId}  \\S+  TOOL write`));
    const shown = await cli(["show", sessionId]);
    assert.equal(shown.code, 0);
    assert.match(shown.stdout, /^> and now\?$/m);
    assert.match(shown.stdout, /^→ write \{"path":"src\/new\.ts",/m);
    assert.match(shown.stdout, /^✓ write /m);

    const { code, stdout: diff } = await cli(["changes", sessionId]);
    assert.equal(code, 0);
    const copy = path.join(stateDir, `apply-${sessionId}`);
    cpSync(dir, copy, { recursive: true });
    execFileSync("git", ["apply", "-"], { cwd: copy, input: diff });
    assert.equal(readFileSync(path.join(copy, "src", "new.ts"), "utf8"), "export const n = 1;\n");
  });

  it("never writes a terminal escape sequence from a file, a prompt or a title: control characters are shown as pictures", async () => {
    const dir = workspaceDir();
    // A window title, a clipboard write (OSC 52), an erased line and a fake tool line.
    writeFileSync(path.join(dir, "notes.txt"), "\x1b]0;PWNED\x07\x1b]52;c;ZXZpbA==\x07\x1b[2K\u009b31m\u202efake\n");
    const run = await cli(["run", "--workspace", dir, 'TOOL read {"path":"notes.txt"}']);
    assert.equal(run.code, 0, run.stderr);
    const titled = await cli(["run", "say hi \x1b]0;TITLE\x07\x1b[2K"]);
    assert.equal(titled.code, 0, titled.stderr);
    const listed = await cli(["sessions", "--limit", "1"]);
    const shown = await cli(["show", sessionIdOf(titled.stdout)]);
    for (const { stdout, stderr } of [run, titled, listed, shown]) {
      for (const control of ["\x1b", "\x07", "\u009b", "\u202e"]) assert.ok(!(stdout + stderr).includes(control), JSON.stringify(control));
    }
    assert.match(run.stdout, /^✓ read \{"path":"notes\.txt"\} — .*␛\]0;PWNED␇␛\]52;c;ZXZpbA==␇␛\[2K\\u009b31m\\u202efake$/m);
    assert.match(listed.stdout, /^s_\S+ {2}\S+ {2}say hi ␛\]0;TITLE␇␛\[2K$/m);
    assert.match(shown.stdout, /^say hi ␛\]0;TITLE␇␛\[2K\n/);
    assert.match(shown.stdout, /^> say hi ␛\]0;TITLE␇␛\[2K$/m);
  });

  it("lists workspaces newest first and deletes a session, then its workspace (refused while the session uses it)", async () => {
    const dir = workspaceDir();
    const run = await cli(["run", "--workspace", dir, "hello"]);
    assert.equal(run.code, 0, run.stderr);
    const sessionId = sessionIdOf(run.stdout);
    const { workspaceId } = await (await api(`/api/sessions/${sessionId}`)).json();
    const listed = await cli(["workspaces", "--limit", "1"]);
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, new RegExp(`^${workspaceId}  \\S+  \\d+ files, [\\d.]+ KiB\n`));
    const inUse = await cli(["delete", workspaceId]);
    assert.equal(inUse.code, 1);
    assert.match(
      inUse.stderr,
      new RegExp(`^error: workspace_in_use: workspace ${workspaceId} is used by 1 session\\(s\\) \\(${sessionId}\\)`),
    );
    assert.deepEqual(await cli(["delete", sessionId]), { code: 0, stdout: `deleted ${sessionId}\n`, stderr: "" });
    assert.deepEqual(await cli(["delete", workspaceId]), { code: 0, stdout: `deleted ${workspaceId}\n`, stderr: "" });
    const after = await cli(["workspaces", "--json"]);
    assert.ok(!JSON.parse(after.stdout).items.some((w) => w.workspaceId === workspaceId));
    const again = await cli(["delete", workspaceId]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /^error: workspace_not_found: /);
    assert.equal((await cli(["delete"])).code, 2);
  });

  it("--json: show, sessions and abort print the server's answer as one line; delete prints nothing; changes stays a diff", async () => {
    const run = await cli(["run", "--workspace", workspaceDir(), "hello"]);
    assert.equal(run.code, 0, run.stderr);
    const sessionId = sessionIdOf(run.stdout);
    const shown = await cli(["show", sessionId, "--json"]);
    const info = await (await api(`/api/sessions/${sessionId}`)).json();
    const messages = (await (await api(`/api/sessions/${sessionId}/messages`)).text())
      .trimEnd()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual([shown.code, shown.stderr, shown.stdout.endsWith("}\n"), shown.stdout.split("\n").length], [0, "", true, 2]);
    assert.deepEqual(JSON.parse(shown.stdout), { session: info, messages });
    const listed = await cli(["sessions", "--limit", "1", "--json"]);
    assert.deepEqual(Object.keys(JSON.parse(listed.stdout)).sort(), ["items", "nextCursor"]);
    assert.equal(JSON.parse(listed.stdout).items[0].id, sessionId);
    assert.deepEqual(await cli(["abort", sessionId, "--json"]), { code: 0, stdout: '{"aborted":false,"runId":null}\n', stderr: "" });
    const changes = await cli(["changes", sessionId, "--json"]);
    assert.deepEqual(changes, { code: 0, stdout: await (await api(`/api/sessions/${sessionId}/changes`)).text(), stderr: "" });
    assert.deepEqual(await cli(["delete", sessionId, "--json"]), { code: 0, stdout: "", stderr: "" });
  });

  it("Ctrl-C stops the run on the server and follows it to its end; abort ID stops a session's run", async () => {
    const client = interruptible(["run", "HANG"]);
    await waitFor(() => client.stdout.includes("partial answer"));
    client.interrupt();
    assert.equal(await client.running, 130);
    assert.match(client.stderr, /^stopping the run \(Ctrl-C again to leave without waiting\)$/m);
    const sessionId = sessionIdOf(client.stdout);
    const info = await (await api(`/api/sessions/${sessionId}`)).json();
    assert.equal(info.status, "idle");
    const events = (await (await api(`/api/sessions/${sessionId}/events`)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.equal(events.at(-1).type, "agent_completed");
    assert.equal(events.at(-1).stopReason, "ABORTED");
    assert.deepEqual(await cli(["abort", sessionId]), { code: 0, stdout: "no run or compaction was active\n", stderr: "" });
  });

  it("Ctrl-C before the run is known waits for the server to name it and stops that run only (hunt 77)", async () => {
    // A teammate's run on the session: a run-less abort would have stopped it.
    const first = await cli(["run", "hello"]);
    const sessionId = sessionIdOf(first.stdout);
    const teammate = cli(["run", "--session", sessionId, "SLOW 30 100"]);
    await waitFor(async () => (await (await api(`/api/sessions/${sessionId}`)).json()).status === "running");
    // Ctrl-C at once: before the prompt's answer, so before its run is known.
    const queued = interruptible(["run", "--session", sessionId, "--when-busy", "followUp", "SLOW 30 100"], { atOnce: "prompt" });
    assert.equal(await queued.running, 130);
    assert.equal(queued.stderr, "stopping the run (Ctrl-C again to leave without waiting)\n");
    assert.equal((await teammate).code, 0);
    const ends = (await (await api(`/api/sessions/${sessionId}/events`)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.type === "agent_completed" || e.type === "queued_message_withdrawn")
      .map((e) => e.stopReason ?? e.type);
    // hello, the teammate's run to its end, then the queued prompt's own run, aborted.
    assert.deepEqual(ends, ["STOP", "STOP", "ABORTED"]);
  });

  it("a run stopped by someone else exits 1; --when-busy followUp runs after another client's run, exit 0", async () => {
    const first = await cli(["run", "hello"]);
    const sessionId = sessionIdOf(first.stdout);
    const running = async () => (await (await api(`/api/sessions/${sessionId}`)).json()).status === "running";
    const stopped = cli(["run", "--session", sessionId, "SLOW 50 100"]);
    await waitFor(running);
    assert.equal((await cli(["abort", sessionId])).code, 0);
    const aborted = await stopped;
    assert.equal(aborted.code, 1);
    assert.match(aborted.stdout, /^\(aborted\)$/m);
    const teammate = cli(["run", "--session", sessionId, "SLOW 10 100"]);
    await waitFor(running);
    const queued = await cli(["run", "--session", sessionId, "--when-busy", "followUp", "hello"]);
    assert.equal(queued.code, 0, queued.stderr);
    // Its own run only: the teammate's ticks are not in it.
    assert.equal(queued.stdout.split("\n")[1], "hello world");
    assert.equal((await teammate).code, 0);
  });

  it("Ctrl-C's abort is sent again when it gets no answer; a failure after the run ends is a warning, the exit code the run's (hunt 77)", async () => {
    proxy.refuseNext("POST", /\/abort$/);
    const client = interruptible(["run", "HANG"], { url: proxy.base });
    await waitFor(() => client.stdout.includes("partial answer"));
    client.interrupt();
    assert.equal(await client.running, 130);
    assert.equal(client.stderr, "stopping the run (Ctrl-C again to leave without waiting)\n");
    const aborts = proxy.requests.filter((r) => r.startsWith("POST ") && r.endsWith("/abort"));
    assert.equal(aborts.length, 2);

    const dir = workspaceDir();
    proxy.refuseNext("GET", /\/changes$/);
    const run = await cli(["run", "--workspace", dir, "--allow-write", 'TOOL write {"path":"a.txt","content":"x"}'], { url: proxy.base });
    assert.equal(run.code, 0);
    const sessionId = sessionIdOf(run.stdout);
    assert.equal(
      run.stderr,
      `warning: the run has ended, but its changes or tokens could not be read (internal_error: refused by the test proxy); pi-harness changes ${sessionId} shows its changes\n`,
    );
  });

  it("--json names what was left out: its packed and uploaded lines list the client's and the harness's skipped files (hunt 82)", async () => {
    const dir = workspaceDir();
    symlinkSync("a.txt", path.join(dir, "link.txt"));
    // Past the harness's 16 MiB a file: the client packs it, the harness skips it (random: zeros
    // would be refused as a decompression bomb).
    writeFileSync(path.join(dir, "big.bin"), randomBytes(16 * 1024 * 1024 + 1));
    const { code, stdout, stderr } = await cli(["run", "--workspace", dir, "--json", "hello"]);
    assert.equal(code, 0, stderr);
    const lines = stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    const [packed, uploaded, session] = lines;
    assert.deepEqual(
      { ...packed, archiveBytes: typeof packed.archiveBytes },
      {
        type: "packed",
        files: 4,
        bytes: 16 * 1024 * 1024 + 1 + 6 + 19 + 6,
        archiveBytes: "number",
        skipped: [{ path: "link.txt", reason: "symbolic link" }],
      },
    );
    assert.equal(uploaded.type, "uploaded");
    assert.match(uploaded.workspaceId, /^w_/);
    assert.deepEqual(uploaded.skipped, [{ path: "big.bin", reason: "file_too_large" }]);
    assert.equal(uploaded.files, 3);
    assert.deepEqual(session, {
      type: "session",
      sessionId: session.sessionId,
      workspaceId: uploaded.workspaceId,
      created: true,
      viewer: `${dev.base}/#/s/${session.sessionId}`,
    });
    // Then the run's events, each with its seq; the client's own lines have none.
    assert.ok(lines.slice(3).every((e) => typeof e.seq === "number" && e.sessionId === session.sessionId));
    assert.equal(lines.at(-1).type, "agent_completed");
    // Without --json the same is said in words.
    const plain = await cli(["run", "--workspace", dir, "hello"]);
    assert.match(plain.stdout, /^packed 4 files .*, skipped 1 \(link\.txt: symbolic link\)$/m);
    assert.match(plain.stdout, /^the harness skipped big\.bin \(file_too_large\)$/m);
  });

  it("Ctrl-C before the prompt is sent stops there and names the workspace and session it created (hunt 82)", async () => {
    const creatingSession = (url, init) => init.method === "POST" && url.endsWith("/api/sessions");
    const dir = workspaceDir();
    const plain = interruptible(["run", "--workspace", dir, "--allow-write", "hello"]);
    const code = await watchingRequests(
      (url, init) => creatingSession(url, init) && plain.interrupt(),
      () => plain.running,
    );
    assert.equal(code, 130);
    const sessionId = sessionIdOf(plain.stdout);
    const { workspaceId, counts } = await (await api(`/api/sessions/${sessionId}`)).json();
    assert.equal(counts.messages, 0);
    assert.equal(
      plain.stderr,
      "stopping before the prompt is sent (Ctrl-C again to leave at once)\n" +
        `interrupted before the prompt was sent; created workspace ${workspaceId} and session ${sessionId}: ` +
        `continue with pi-harness run --session ${sessionId} "PROMPT", or delete them with pi-harness delete ${sessionId} && pi-harness delete ${workspaceId}\n`,
    );
    assert.equal(plain.exited, null);
    await api(`/api/workspaces/${workspaceId}`);

    // --json: the same as a line of its own, after those naming what was created.
    const json = interruptible(["run", "--workspace", dir, "--json", "hello"]);
    assert.equal(
      await watchingRequests(
        (url, init) => creatingSession(url, init) && json.interrupt(),
        () => json.running,
      ),
      130,
    );
    const lines = json.stdout
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      lines.map((l) => l.type),
      ["packed", "uploaded", "session", "interrupted"],
    );
    assert.deepEqual(lines[3], {
      type: "interrupted",
      promptSent: false,
      created: { workspaceId: lines[1].workspaceId, sessionId: lines[2].sessionId },
      underWay: null,
    });
    assert.match(
      json.stderr,
      new RegExp(`^interrupted before the prompt was sent; created workspace ${lines[1].workspaceId} and session `, "m"),
    );

    // Pressed during the upload: it is not followed by a session; twice, the client leaves at once.
    const uploading = interruptible(["run", "--workspace", dir, "hello"]);
    const twice = (url, init) => {
      if (init.method !== "POST" || !url.endsWith("/api/workspaces")) return;
      uploading.interrupt();
      uploading.interrupt();
    };
    await watchingRequests(twice, () => uploading.running);
    assert.equal(uploading.exited, 130);
    assert.match(
      uploading.stderr,
      /^interrupted before the prompt was sent; nothing was created on the harness; the upload under way may still store a workspace \(pi-harness workspaces lists it\)$/m,
    );
  });

  it("a --when-busy steer client shows the call under way without arguments it never saw, and says its tokens are from when it joined (hunt 82)", async () => {
    const dir = workspaceDir();
    const first = await cli(["run", "--workspace", dir, "hello"]);
    const sessionId = sessionIdOf(first.stdout);
    const teammate = cli(["run", "--session", sessionId, "--allow-bash", 'TOOL bash {"command":"sleep 2"}']);
    await waitFor(async () => (await (await api(`/api/sessions/${sessionId}/events`)).text()).includes('"tool_call_started"'));
    const steer = await cli(["run", "--session", sessionId, "--when-busy", "steer", "and now?"]);
    assert.equal(steer.code, 0, steer.stderr);
    assert.match(steer.stdout, /^✓ bash \(started before this client joined the run\) — \(no output\)$/m);
    assert.doesNotMatch(steer.stdout, /bash \{\}/);
    assert.match(steer.stdout, /^tokens since this client joined the run \(it began before\): 10 in · 5 out · 15 total \(1 model call\)$/m);
    // The teammate saw the whole run: its two model calls, the one after the steer included.
    const whole = await teammate;
    assert.equal(whole.code, 0, whole.stderr);
    assert.match(whole.stdout, /^✓ bash \{"command":"sleep 2"\} — \(no output\)$/m);
    assert.match(whole.stdout, /^tokens: 20 in · 10 out · 30 total \(2 model calls\)$/m);
  });

  it("the diff after a run: its own in a new session, labelled the session's when it continues one, none when the run wrote nothing (hunt 82)", async () => {
    const dir = workspaceDir();
    const first = await cli(["run", "--workspace", dir, "--allow-write", 'TOOL write {"path":"a.txt","content":"first\\n"}']);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /^changes:\n(.*\n)*-hello\n\+first$/m);
    const sessionId = sessionIdOf(first.stdout);
    const seen = proxy.requests.length;
    const idle = await cli(["run", "--session", sessionId, "--allow-write", "and now?"], { url: proxy.base });
    assert.equal(idle.code, 0, idle.stderr);
    assert.match(idle.stdout, /^no changes in this run$/m);
    assert.doesNotMatch(idle.stdout, /first/);
    // Not even asked for.
    assert.deepEqual(
      proxy.requests.slice(seen).filter((r) => r.includes("/changes")),
      [],
    );
    const failed = await cli(["run", "--session", sessionId, "--model", "replay:s_nope", "hello"]);
    assert.equal(failed.code, 1);
    assert.match(failed.stderr, /^error: replay_load_failed: /m);
    assert.match(failed.stdout, /^no changes in this run$/m);
    assert.doesNotMatch(failed.stdout, /first/);
    // Without --allow-write nothing the run called could write.
    const readOnly = await cli(["run", "--session", sessionId, 'TOOL write {"path":"b.txt","content":"x"}']);
    assert.match(readOnly.stdout, /^no changes in this run$/m);
    const second = await cli(["run", "--session", sessionId, "--allow-write", 'TOOL write {"path":"b.txt","content":"second\\n"}']);
    assert.equal(second.code, 0, second.stderr);
    assert.match(second.stdout, /^the session's changes so far \(earlier runs' included\):\n/m);
    assert.match(second.stdout, /^\+first$/m);
    assert.match(second.stdout, /^\+second$/m);
  });

  it("a title cut at 80 characters never splits an emoji (the server refused the half)", async () => {
    const text = `${"x".repeat(78)}🚀 on a cold start`;
    const run = await cli(["run", text]);
    assert.equal(run.code, 0, run.stderr);
    const info = await (await api(`/api/sessions/${sessionIdOf(run.stdout)}`)).json();
    assert.equal(info.title, `${"x".repeat(78)}…`);
  });

  it("changes on a terminal shows escape sequences as text; piped, the diff is raw for git apply", async () => {
    const dir = workspaceDir();
    const run = await cli([
      "run",
      "--workspace",
      dir,
      "--allow-write",
      `TOOL write ${JSON.stringify({ path: "t.txt", content: "\u001b]0;PWNED\u0007\n" })}`,
    ]);
    assert.equal(run.code, 0, run.stderr);
    const sessionId = sessionIdOf(run.stdout);
    const piped = await cli(["changes", sessionId]);
    assert.ok(piped.stdout.includes("+\u001b]0;PWNED\u0007"));
    let tty = "";
    const code = await main(["--url", dev.base, "changes", sessionId], {
      stdout: { write: (s) => (tty += s), isTTY: true },
      stderr: { write: () => {} },
      env: { PI_HARNESS_TOKEN: TOKEN, NO_COLOR: "1" },
    });
    assert.equal(code, 0);
    assert.ok(!tty.includes("\u001b") && tty.includes("+␛]0;PWNED␇"), JSON.stringify(tty));
  });

  it("a --url with a fragment exits 2; an answer that is not the harness's JSON is an error line, exit 1", async () => {
    const fragment = await cli(["sessions"], { url: `${dev.base}/#/s/s_x` });
    assert.equal(fragment.code, 2);
    assert.match(fragment.stderr, /give the harness's address without a query or a fragment/);
    for (const url of ["localhost:8787", "127.0.0.1:8787", "ftp://x"]) {
      const schemeless = await cli(["sessions"], { url });
      assert.deepEqual([url, schemeless.code], [url, 2]);
      assert.match(schemeless.stderr, /give the harness's address with http:\/\/ or https:\/\//);
    }
    const page = http.createServer((_req, res) => {
      res.writeHead(200, { "content-type": "text/html" });
      res.end("<html>\u001b]0;PWNED\u0007 a login page</html>");
    });
    await new Promise((r) => page.listen(0, "127.0.0.1", r));
    try {
      const html = await cli(["sessions"], { url: `http://127.0.0.1:${page.address().port}` });
      assert.deepEqual(html, {
        code: 1,
        stdout: "",
        stderr: "error: unexpected_answer: GET /api/sessions answered 200 with text/html, not JSON: is --url the harness?\n",
      });
    } finally {
      page.close();
    }
  });

  it("arguments a command does not take, a URL with a password and a token no header can carry exit 2, naming what is wrong (hunt 77)", async () => {
    const usage = async (args, env) => {
      const out = await cli(args, env);
      return [out.code, out.stdout, out.stderr.split("\n")[0]];
    };
    assert.deepEqual(await usage(["sessions", "s_x"]), [2, "", "sessions takes no argument (s_x): did you mean show or changes?"]);
    assert.deepEqual(await usage(["show", "s_x", "--allow-write"]), [2, "", "--allow-write does not apply to show"]);
    assert.deepEqual(await usage(["run", "--limit", "5", "hi"]), [2, "", "--limit does not apply to run"]);
    assert.deepEqual(await usage(["run", "--workspace", "", "hi"]), [2, "", "--workspace: give a directory"]);
    assert.deepEqual(await usage(["run", "--when-busy", "steer", "hi"]), [
      2,
      "",
      "--when-busy goes with --session (a new session is never busy)",
    ]);
    assert.deepEqual(await usage(["run", "--session", "s_x", "--when-busy", "later", "hi"]), [
      2,
      "",
      "--when-busy takes steer or followUp",
    ]);
    const secret = new URL(dev.base);
    secret.username = "deploy";
    secret.password = "hunter2";
    const withPassword = await cli(["sessions"], { url: secret.href.replace(/\/$/, "") });
    assert.equal(withPassword.code, 2);
    assert.equal(
      withPassword.stderr.split("\n")[0],
      "--url: give the harness's address without a user name or password (a token goes in --token)",
    );
    assert.doesNotMatch(withPassword.stderr, /hunter2/);
    assert.deepEqual(await usage(["sessions"], { token: "tok en" }), [
      2,
      "",
      "the token (--token or PI_HARNESS_TOKEN) holds a space, a control or a non-ASCII character, which no token has",
    ]);
    // A line break pasted with it is not part of it.
    assert.equal((await cli(["sessions"], { token: `${TOKEN}\r\n` })).code, 0);
  });

  it("refusals: no token is 401 (exit 1); bad usage exits 2", async () => {
    const noToken = await cli(["sessions"], { token: null });
    assert.equal(noToken.code, 1);
    assert.match(noToken.stderr, /^error: unauthorized: /);
    assert.equal(
      noToken.stderr.split("\n")[1],
      "hint: the harness has AUTH_TOKENS set: give one of its tokens with --token or PI_HARNESS_TOKEN",
    );
    const wrongToken = await cli(["sessions"], { token: "not-a-configured-token" });
    assert.deepEqual(
      [wrongToken.code, wrongToken.stderr.split("\n")[1]],
      [1, "hint: the token given (--token or PI_HARNESS_TOKEN) is not one of the harness's AUTH_TOKENS"],
    );
    assert.equal((await cli(["run"])).code, 2);
    assert.equal((await cli(["run", "--session", "s_x", "--workspace", ".", "hi"])).code, 2);
    assert.equal((await cli(["frobnicate"])).code, 2);
    const missing = await cli(["run", "--workspace", "/no/such/dir", "hi"]);
    assert.deepEqual([missing.code, missing.stderr.split("\n")[0]], [2, "--workspace /no/such/dir: no such directory"]);
    const file = await cli(["run", "--workspace", "package.json", "hi"]);
    assert.deepEqual(
      [file.code, file.stderr.split("\n")[0]],
      [2, "--workspace package.json: not a directory (give the project's directory; it is packed for you)"],
    );
    assert.equal((await cli(["show"])).code, 2);
    const unknown = await cli(["show", "s_doesnotexist"]);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /^error: session_not_found: /);
  });

  it("npm run agent takes --workspace from the directory npm was called in, not the repository's root (hunt 28)", async () => {
    // Nothing listens on port 9: the client packs, then fails to upload; the pack is what is checked.
    const unreachable = ["--url", "http://127.0.0.1:9"];
    const sub = path.resolve("examples");
    const viaNpm = (dir) =>
      promisify(execFile)("npm", ["run", "-s", "agent", "--", "run", "--workspace", dir, ...unreachable, "hi"], { cwd: sub }).then(
        () => assert.fail("the upload cannot succeed"),
        (err) => `${err.stdout}${err.stderr}`,
      );
    for (const dir of [".", "./demo-workspace"]) {
      const expected = (await listWorkspaceFiles(path.join(sub, dir))).files.length;
      assert.match(await viaNpm(dir), new RegExp(`^packed ${expected} files `, "m"), dir);
    }
    const missing = await viaNpm("./nowhere");
    assert.match(missing, new RegExp(`^--workspace ./nowhere: no such directory \\(looked for ${sub}/nowhere\\)$`, "m"));
    // A client started by some other npm script (which passes INIT_CWD on to everything it starts)
    // takes paths from its own working directory.
    const dir = workspaceDir();
    const started = await cli(["run", "--workspace", path.basename(dir), ...unreachable, "hi"], {
      cwd: path.dirname(dir),
      env: { INIT_CWD: "/", npm_lifecycle_event: "test", npm_package_name: "pi-harness" },
    });
    assert.match(started.stdout, /^packed 3 files /m);
  });
});

describe("npm run demo", () => {
  it("uploads the example workspace and replays the recorded session through the real tools, with no model", async () => {
    const { stdout } = await promisify(execFile)("node", ["scripts/demo.mjs", "--url", dev.base], {
      env: { ...process.env, PI_HARNESS_TOKEN: TOKEN, NO_COLOR: "1" },
    });
    for (const tool of ["ls", "grep", "read", "edit"]) assert.match(stdout, new RegExp(`^✓ ${tool} `, "m"));
    assert.match(stdout, /^\+const PORT = Number\(process\.env\.PORT \?\? 8080\);$/m);
    assert.match(stdout, /^Start it with `PORT=9000 npm start` to pick another port\.$/m);
    const viewer = new RegExp(`^   ${dev.base.replace(/\./g, "\\.")}/#/s/(s_[A-Za-z0-9_-]+)$`, "m").exec(stdout);
    assert.ok(viewer, stdout);
    // The command it suggests reaches the same harness: --url as given, the token from the environment.
    assert.match(
      stdout,
      new RegExp(`^   or in a terminal: npm run agent -- show ${viewer[1]} --url ${dev.base.replace(/\./g, "\\.")}$`, "m"),
    );
    // The replayed session really ran the tools: its results are from the workspace, and it was flushed to R2.
    const messages = (await (await api(`/api/sessions/${viewer[1]}/messages`)).text())
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      messages.map((m) => m.kind),
      ["user", "assistant", "tool_result", "assistant", "tool_result", "assistant", "tool_result", "assistant", "tool_result", "assistant"],
    );
    assert.match(messages[4].resultText, /^src\/server\.js:30: server\.listen\(PORT/);
    const server = await (await api(`/api/sessions/${viewer[1]}/files/src/server.js`)).text();
    assert.match(server, /^const PORT = Number\(process\.env\.PORT \?\? 8080\);$/m);
  });
});
