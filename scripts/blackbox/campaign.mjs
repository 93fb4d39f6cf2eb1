// The black-box campaign: drives `wrangler dev` (what `npm run dev` runs) over HTTP like a user and
// checks what in-workerd tests cannot see: connections that stay usable after refusals and large
// runs, many concurrent clients, a kill -9 in the middle of a run, storage left by lookups and by
// refused uploads. Usage: npm run test:blackbox [-- only=<check>,<check>]. Exits 1 on any failure.
import { execFileSync, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { gzipSync } from "node:zlib";
import { freePort, startDevServer } from "./dev-server.mjs";
import { startFakeModel } from "./fake-model.mjs";

const only = process.argv
  .find((a) => a.startsWith("only="))
  ?.slice(5)
  .split(",");
const results = [];
const record = (check, ok, detail) => {
  results.push({ check, ok, detail });
  console.log(`${ok ? "ok  " : "FAIL"} ${check}: ${detail}`);
};

/**
 * One HTTP request on `agent`; resolves with status, body and timing, never rejects. `timeoutMs`
 * bounds a wait for bytes; `deadlineMs` the whole request (an SSE answer's pings keep it from idling).
 */
function request(base, agent, method, urlPath, { body, headers = {}, timeoutMs = 10_000, deadlineMs, onChunk } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const req = http.request(`${base}${urlPath}`, { method, agent, headers }, (res) => {
      const chunks = [];
      res.on("data", (c) => {
        chunks.push(c);
        onChunk?.(c);
      });
      res.on("end", () =>
        resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(chunks).toString("utf8"), ms: Date.now() - started }),
      );
      res.on("error", (e) => resolve({ status: `ERR ${e.message}`, body: "", ms: Date.now() - started }));
    });
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    if (deadlineMs) {
      const deadline = setTimeout(() => req.destroy(new Error(`not done within ${deadlineMs} ms`)), deadlineMs);
      req.on("close", () => clearTimeout(deadline));
    }
    req.on("error", (e) => resolve({ status: `ERR ${e.message}`, body: "", ms: Date.now() - started }));
    if (body instanceof Function) body(req);
    else req.end(body);
  });
}

const json = (value) => ({ body: JSON.stringify(value), headers: { "content-type": "application/json" } });
/** An exported conversation of 56 messages, 14 MiB: more than the pipes to a client that reads nothing hold. */
function largeConversation() {
  const T = "2026-12-03T00:00:00.000Z";
  const lines = [];
  let parent = null;
  for (let n = 1; n <= 56; n++) {
    const head = { sessionId: "s_exports", createdAt: T, id: `m_${n}`, parentId: parent };
    lines.push(
      JSON.stringify(
        n % 2 ? { ...head, kind: "user", text: `q${n}` } : { ...head, kind: "assistant", text: "a".repeat(512 * 1024), stopReason: "STOP" },
      ),
    );
    parent = `m_${n}`;
  }
  return lines;
}

/** `lines` imported as a new session. */
function importConversation(base, lines) {
  return request(base, new http.Agent(), "POST", "/api/sessions/import", {
    body: `${lines.join("\n")}\n`,
    headers: { "content-type": "application/x-ndjson" },
    timeoutMs: 60_000,
  });
}

/** A session whose event log holds `prompts` answers of `chars` characters in `delta`-character deltas. */
async function sessionWithLargeLog(base, agent, prompts, chars = 600_000, delta = 64) {
  const { sessionId } = JSON.parse((await request(base, agent, "POST", "/api/sessions", json({}))).body);
  for (let i = 0; i < prompts; i++) {
    await request(base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, {
      ...json({ text: `BIG ${chars} ${delta}` }),
      timeoutMs: 60_000,
      deadlineMs: 120_000,
    });
  }
  const logged = (await request(base, agent, "GET", `/api/sessions/${sessionId}/events`, { timeoutMs: 60_000 })).body
    .split("\n")
    .filter(Boolean);
  return { sessionId, logged };
}

/** A client of a stream (SSE, a download) that takes the answer's head and then reads nothing, until `readRestOf`. */
function unreadStream(base, path) {
  return new Promise((resolve) => {
    const client = { status: null, res: null };
    const req = http.get(`${base}${path}`, { agent: new http.Agent() }, (res) => {
      res.pause();
      Object.assign(client, { status: res.statusCode, res });
      resolve(client);
    });
    req.on("error", (e) => resolve({ ...client, status: `ERR ${e.message}` }));
  });
}

/** The text an `unreadStream` client gets when it reads on: to the stream's end or its error (or 60 s). */
function readRestOf(client) {
  return new Promise((resolve) => {
    const chunks = [];
    const done = () => {
      clearTimeout(deadline);
      resolve(Buffer.concat(chunks).toString("utf8"));
    };
    const deadline = setTimeout(() => {
      client.res.destroy();
      done();
    }, 60_000);
    client.res.on("data", (c) => chunks.push(c));
    client.res.on("end", done);
    client.res.on("error", done);
    client.res.resume();
  });
}

const sseEvents = (text) =>
  text
    .split("\n\n")
    .filter((f) => f.includes("data: "))
    .map((f) =>
      JSON.parse(
        f
          .split("\n")
          .find((l) => l.startsWith("data: "))
          .slice(6),
      ),
    );

/** 20 requests in a row on `agent`; every one must answer correctly within 2 s. */
async function twentyInARow(base, agent) {
  const created = await request(base, agent, "POST", "/api/sessions", json({}));
  if (created.status !== 201) return { bad: 20, slowest: created.ms, first: created.status };
  const { sessionId } = JSON.parse(created.body);
  let bad = 0;
  let slowest = 0;
  let firstBad = null;
  for (let i = 0; i < 20; i++) {
    const res =
      i % 2
        ? await request(base, agent, "GET", `/api/sessions/${sessionId}`)
        : await request(base, agent, "POST", "/api/sessions", json({}));
    slowest = Math.max(slowest, res.ms);
    if (res.status !== (i % 2 ? 200 : 201) || res.ms > 2000) {
      bad++;
      firstBad ??= `${res.status} after ${res.ms} ms`;
    }
  }
  return { bad, slowest, first: firstBad };
}

/** Paths of the files under `dir` whose parent directory is named `parent`. */
function listFiles(dir, parent) {
  if (!fs.existsSync(dir)) return new Set();
  const found = new Set();
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const where = entry.parentPath ?? entry.path;
    if (entry.isFile() && path.basename(where) === parent) found.add(path.join(where, entry.name));
  }
  return found;
}

/** Files under `dir` whose name ends in `suffix` (and whose parent folder is `parent`, when given). */
function countFiles(dir, suffix, parent) {
  if (!fs.existsSync(dir)) return 0;
  let n = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name.endsWith(suffix) && (!parent || path.basename(entry.parentPath ?? entry.path) === parent)) n++;
  }
  return n;
}

/** A tar of `files` random files of `bytes` each, made by the system tar. */
function makeTar(dir, files, bytes) {
  const src = path.join(dir, `src-${files}-${bytes}`);
  fs.mkdirSync(src, { recursive: true });
  const data = Buffer.alloc(bytes);
  for (let i = 0; i < files; i++) {
    for (let j = 0; j < bytes; j += 4) data.writeUInt32LE((Math.random() * 2 ** 32) >>> 0, j);
    fs.writeFileSync(path.join(src, `f${i}.bin`), data);
  }
  const out = path.join(dir, `ws-${files}-${bytes}.tar`);
  execFileSync("tar", ["-cf", out, "-C", src, "."]);
  return fs.readFileSync(out);
}

/**
 * Writes `files` (path -> text) under `dir`, tars them and uploads the tar: the workspace id and the
 * tar's bytes. `mode` is every file's mode (`git archive` writes 0664) but those `modes` names.
 */
async function uploadTree(base, agent, dir, files, mode = 0o644, modes = {}) {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(dir, name)), { recursive: true });
    fs.writeFileSync(path.join(dir, name), text);
    fs.chmodSync(path.join(dir, name), modes[name] ?? mode);
  }
  const tar = execFileSync("tar", ["-cf", "-", "-C", dir, "."], { maxBuffer: 1 << 30 });
  const upload = await request(base, agent, "POST", "/api/workspaces", { body: tar, headers: { "content-type": "application/x-tar" } });
  return { workspaceId: JSON.parse(upload.body).workspaceId, tar };
}

/**
 * Waits until the server has logged `count` stalled streams ended since `from` (a length of its log),
 * or `deadlineMs` has passed; returns how many it logged.
 */
async function streamsEnded(log, from, count, deadlineMs) {
  const ended = () => log().slice(from).split("a stalled stream was ended").length - 1;
  const deadline = Date.now() + deadlineMs;
  while (ended() < count && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
  return ended();
}

/** A prompt's run to its end: its events. */
async function promptEvents(base, agent, sessionId, body) {
  const res = await request(base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, { ...json(body), timeoutMs: 30_000 });
  return sseEvents(res.body);
}

/** Starts a run whose model sends one delta and then nothing; once that delta is in, `done` is its response (after an abort). */
async function hangingRun(base, agent, streamPath) {
  let seen = "";
  const hanging = request(base, agent, "POST", streamPath, { ...json({ text: "HANG" }), timeoutMs: 30_000, onChunk: (c) => (seen += c) });
  for (let i = 0; i < 100 && !seen.includes("assistant_delta"); i++) await new Promise((r) => setTimeout(r, 100));
  return { done: hanging };
}

/** A ustar header for a regular file of `size` bytes. */
function tarHeader(name, size) {
  const header = Buffer.alloc(512);
  header.write(name, 0);
  header.write("0000644\0", 100);
  header.write("0000000\0", 108);
  header.write("0000000\0", 116);
  header.write(`${size.toString(8).padStart(11, "0")}\0`, 124);
  header.write("00000000000\0", 136);
  header.write("        ", 148);
  header.write("0", 156);
  header.write("ustar\x0000", 257);
  let sum = 0;
  for (const b of header) sum += b;
  header.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148);
  return header;
}

/** A tar with `n` empty files, written by hand (the system tar would need n files on disk). */
function tarOfEmptyFiles(n) {
  const blocks = [];
  for (let i = 0; i < n; i++) blocks.push(tarHeader(`f${i}`, 0));
  blocks.push(Buffer.alloc(1024));
  return Buffer.concat(blocks);
}

const checks = {
  /**
   * Uploads past what one isolate ingests at once (2 running, 16 waiting): 18 uploads send half of
   * their body and hold; the 19th is refused at once with 503 ingest_busy and Retry-After; once the
   * 18 finish their bodies every one is stored (201), the connection that got 503 stays usable, and
   * its Idempotency-Key was not claimed by the refusal (sent again: 201, and once more the same answer).
   */
  async busyUploads({ base }) {
    const file = Buffer.alloc(64 * 1024, 0x61);
    const tar = Buffer.concat([tarHeader("a.txt", file.byteLength), file, Buffer.alloc(1024)]);
    const half = tar.byteLength / 2;
    const release = [];
    const held = Array.from({ length: 18 }, () =>
      request(base, new http.Agent(), "POST", "/api/workspaces", {
        headers: { "content-type": "application/x-tar", "content-length": String(tar.byteLength) },
        timeoutMs: 60_000,
        body: (req) => {
          req.write(tar.subarray(0, half));
          release.push(() => req.end(tar.subarray(half)));
        },
      }),
    );
    await new Promise((r) => setTimeout(r, 1500));
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // Sent with an Idempotency-Key: a refusal must not claim it (the retry below is a first use).
    const keyed = { body: tar, headers: { "content-type": "application/x-tar", "idempotency-key": "busy-upload-1" } };
    const refused = await request(base, agent, "POST", "/api/workspaces", keyed);
    for (const finish of release) finish();
    const answers = await Promise.all(held);
    const stored = answers.filter((a) => a.status === 201 && JSON.parse(a.body).files === 1).length;
    const code = refused.status === 503 ? JSON.parse(refused.body).error.code : refused.body.slice(0, 80);
    const after = await twentyInARow(base, agent);
    const retried = await request(base, agent, "POST", "/api/workspaces", keyed);
    const repeated = await request(base, agent, "POST", "/api/workspaces", keyed);
    agent.destroy();
    const ok =
      retried.status === 201 &&
      repeated.status === 201 &&
      repeated.body === retried.body &&
      refused.status === 503 &&
      code === "ingest_busy" &&
      refused.headers["retry-after"] === "5" &&
      refused.ms < 5000 &&
      stored === 18 &&
      after.bad === 0;
    record(
      "busyUploads",
      ok,
      `19th upload: ${refused.status} ${code} (Retry-After ${refused.headers?.["retry-after"]}) in ${refused.ms} ms; held uploads stored ${stored}/18 (${[...new Set(answers.map((a) => a.status))].join(", ")}); then 20 in a row: ${after.bad} bad, slowest ${after.slowest} ms; the same key again: ${retried.status}, once more: ${repeated.status} (${repeated.body === retried.body ? "same answer" : "another answer"})`,
    );
  },
  /**
   * Conversation imports take the isolate's upload slots with archives: six 8 MiB imports and two
   * archive uploads sent at once are all stored (most wait for a slot and read their own body once
   * handed one); an import that stalls after 1 KiB is refused with 408 upload_too_slow, and the
   * server answers the next request at once.
   */
  async busyImports({ base }) {
    const T = "2026-12-03T00:00:00.000Z";
    const lines = [];
    let parent = null;
    for (let n = 1; n <= 5000; n++) {
      const id = `m_${n}`;
      const head = { sessionId: "s_busy", createdAt: T, id, parentId: parent };
      lines.push(
        JSON.stringify(
          n % 2
            ? { ...head, kind: "user", text: `q${n} ${"q".repeat(1600)}` }
            : { ...head, kind: "assistant", text: "a".repeat(1600), stopReason: "STOP" },
        ),
      );
      parent = id;
    }
    const conversation = `${lines.join("\n")}\n`;
    const file = Buffer.alloc(1024 * 1024, 0x61);
    const tar = Buffer.concat([tarHeader("a.txt", file.byteLength), file, Buffer.alloc(1024)]);
    const ndjson = { "content-type": "application/x-ndjson" };
    const started = Date.now();
    const answers = await Promise.all([
      ...Array.from({ length: 6 }, () =>
        request(base, new http.Agent(), "POST", "/api/sessions/import", { body: conversation, headers: ndjson, timeoutMs: 60_000 }),
      ),
      ...Array.from({ length: 2 }, () =>
        request(base, new http.Agent(), "POST", "/api/workspaces", {
          body: tar,
          headers: { "content-type": "application/x-tar" },
          timeoutMs: 60_000,
        }),
      ),
    ]);
    const took = Date.now() - started;
    // What a refused one said (one full run got three 503s here, not seen again).
    const refused = answers.filter((a) => a.status !== 201).map((a) => `${a.status} ${a.body.slice(0, 160)}`);
    const messages = answers.slice(0, 6).map((a) => (a.status === 201 ? JSON.parse(a.body).messages : a.status));
    // The stalled client hangs up once answered, as curl and browsers stop an upload refused early.
    const stalled = await request(base, new http.Agent(), "POST", "/api/sessions/import", {
      headers: { ...ndjson, "transfer-encoding": "chunked" },
      timeoutMs: 30_000,
      body: (req) => {
        req.once("response", (res) => res.once("end", () => req.destroy()));
        req.write(conversation.slice(0, 1024));
      },
    });
    // In 2 of 4 clean-clone CI runs (2026-12-04) this request went unanswered for 10 s, and the same
    // request on a new connection was answered in 22 ms; never in about 25 runs outside CI, alone or
    // loaded (wrangler dev's proxy also holds some answers to unfinished uploads: docs/architecture.md,
    // "Local runtime artefacts"). It is named in the detail and asked once more on a new connection;
    // the check fails only if that one fails too.
    const first = await request(base, new http.Agent(), "GET", "/api/sessions?limit=1");
    const next = first.status === 200 ? first : await request(base, new http.Agent(), "GET", "/api/sessions?limit=1");
    const code = JSON.parse(stalled.body || "{}").error?.code;
    record(
      "busyImports",
      answers.every((a) => a.status === 201) &&
        messages.every((m) => m === 5000) &&
        stalled.status === 408 &&
        code === "upload_too_slow" &&
        stalled.ms < 15_000 &&
        next.status === 200 &&
        next.ms < 2000,
      `${(conversation.length / 2 ** 20).toFixed(1)} MiB imports x6 and 1 MiB uploads x2 at once: ${answers.map((a) => a.status).join(" ")} in ${took} ms${refused.length > 0 ? ` (refused: ${refused.join("; ")})` : ""}, messages ${[...new Set(messages)].join(", ")}; an import stalled after 1 KiB: ${stalled.status} ${code} in ${stalled.ms} ms; next request ${first === next ? "" : `${first.status} in ${first.ms} ms, again: `}${next.status} in ${next.ms} ms`,
    );
  },
  /**
   * Downloads of one session's log that nobody reads (hunt 48: each held about 6 MB in the isolate):
   * the session serves 4 at once, a fifth is 429 too_many_downloads with Retry-After; once the clients
   * hang up, their places come back (when the hang-up reaches the object, else after the 60 s stall
   * cutoff), the server answers meanwhile, and a download read to its end is whole.
   */
  async downloadCap({ base }) {
    const lines = largeConversation();
    const imported = await importConversation(base, lines);
    if (imported.status !== 201) return record("downloadCap", false, `the import: ${imported.status} ${imported.body.slice(0, 240)}`);
    const sid = JSON.parse(imported.body).sessionId;
    const exportPath = `/api/sessions/${sid}/messages`;
    // A client that takes the answer's head and then reads nothing.
    const unread = () =>
      new Promise((resolve) => {
        const req = http.get(`${base}${exportPath}`, { agent: new http.Agent() }, (res) => {
          res.pause();
          resolve({ status: res.statusCode, req });
        });
        req.on("error", (e) => resolve({ status: `ERR ${e.message}`, req }));
      });
    const held = [];
    for (let i = 0; i < 4; i++) held.push(await unread());
    const fifth = await request(base, new http.Agent(), "GET", exportPath);
    const other = await request(base, new http.Agent(), "GET", "/api/sessions?limit=1");
    for (const h of held) h.req.destroy();
    const hungUp = Date.now();
    // Past the 5 s grace the refusal says when the first unread one is cut short (hunt 71: it said
    // 5 s for a minute); the client waits as told.
    await new Promise((r) => setTimeout(r, 6000));
    let again = await request(base, new http.Agent(), "GET", exportPath, { timeoutMs: 30_000 });
    const announced = again.status === 429 ? Number(again.headers["retry-after"]) : null;
    let polls = 0;
    while (again.status === 429 && Date.now() - hungUp < 75_000) {
      await new Promise((r) => setTimeout(r, Number(again.headers["retry-after"] ?? 2) * 1000));
      polls++;
      again = await request(base, new http.Agent(), "GET", exportPath, { timeoutMs: 30_000 });
    }
    const freedMs = Date.now() - hungUp;
    const got =
      again.status === 200
        ? again.body
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l))
        : [];
    const sent = lines.map((l) => JSON.parse(l));
    const whole = got.length === 56 && got.every((m, i) => m.id === sent[i].id && m.kind === sent[i].kind && m.text === sent[i].text);
    record(
      "downloadCap",
      imported.status === 201 &&
        held.every((h) => h.status === 200) &&
        fifth.status === 429 &&
        fifth.headers["retry-after"] === "5" &&
        JSON.parse(fifth.body).error?.code === "too_many_downloads" &&
        other.status === 200 &&
        other.ms < 2000 &&
        (announced === null || (announced >= 40 && polls <= 2)) &&
        again.status === 200 &&
        whole,
      `a ${(lines.join("\n").length / 2 ** 20).toFixed(1)} MiB log (import ${imported.status}): 4 unread downloads ${held.map((h) => h.status).join(" ")}, a fifth ${fifth.status} ${JSON.parse(fifth.body || "{}").error?.code} (Retry-After ${fifth.headers["retry-after"]}); another request meanwhile ${other.status} in ${other.ms} ms; after the 4 hung up, ${announced === null ? "" : `a download 6 s later was told Retry-After ${announced}, then `}a download was served in ${freedMs} ms${announced === null ? "" : ` (${polls} wait(s) as told)`}: ${again.status}, ${got.length} lines${whole ? ", as imported" : ", NOT as imported"}`,
    );
  },
  /**
   * Downloads of all sessions count together once their clients read nothing for 5 s (objects of a
   * class may share an isolate; `wrangler dev` runs them all in one): the server keeps 8 stalled.
   * Three sessions with 4 unread downloads each (each session's most), 12 in all: as many are cut
   * short as stalled past 8 (4 when all stall; a client whose socket still drains is not stalled, seen
   * on a quiet CI machine with 9 of 9), exactly those the server logged, and the rest are whole when
   * their clients read again.
   */
  async stalledDownloadsServer({ base, log }) {
    const lines = largeConversation();
    const sessions = [];
    for (let i = 0; i < 3; i++) {
      const imported = await importConversation(base, lines);
      if (imported.status !== 201)
        return record("stalledDownloadsServer", false, `import ${i}: ${imported.status} ${imported.body.slice(0, 240)}`);
      sessions.push(JSON.parse(imported.body).sessionId);
    }
    const logFrom = log().length;
    const held = [];
    for (let i = 0; i < 4; i++) {
      for (const sid of sessions) {
        held.push(await unreadStream(base, `/api/sessions/${sid}/messages`));
        await new Promise((r) => setTimeout(r, 200));
      }
    }
    await new Promise((r) => setTimeout(r, 10_000));
    const told = await streamsEnded(log, logFrom, 4, 35_000);
    const other = await request(base, new http.Agent(), "GET", `/api/sessions/${sessions[0]}`);
    const rest = await Promise.all(
      held.map(async (c) => (c.status === 200 ? (await readRestOf(c)).split("\n").filter(Boolean).length : 0)),
    );
    const whole = rest.map((n) => n === lines.length);
    record(
      "stalledDownloadsServer",
      held.every((c) => c.status === 200) &&
        whole.filter((w) => !w).length === told &&
        told >= 1 &&
        told <= 4 &&
        other.status === 200 &&
        other.ms < 2000,
      `3 sessions of ${(lines.join("\n").length / 2 ** 20).toFixed(1)} MiB; 12 downloads that read nothing until the server logged ${told} cut (${[...new Set(held.map((c) => c.status))].join(",")}), then read: ${rest.map((n, i) => (whole[i] ? "whole" : `session ${i % 3} cut at ${n} lines`)).join(", ")}; another request meanwhile ${other.status} in ${other.ms} ms`,
    );
  },

  /**
   * HEAD of a download (hunt 51): Hono ran the GET route and dropped its body uncancelled, so four
   * HEADs of a log held the session's four download places until the 60 s stall cutoff. HEADs of
   * every log and of the event stream, then a download: it is served, and whole.
   */
  async headDownloads({ base }) {
    const T = "2026-12-04T00:00:00.000Z";
    const lines = [
      { sessionId: "s_head", createdAt: T, id: "m_1", parentId: null, kind: "user", text: "q" },
      { sessionId: "s_head", createdAt: T, id: "m_2", parentId: "m_1", kind: "assistant", text: "a", stopReason: "STOP" },
    ].map((line) => JSON.stringify(line));
    const imported = await request(base, new http.Agent(), "POST", "/api/sessions/import", {
      body: `${lines.join("\n")}\n`,
      headers: { "content-type": "application/x-ndjson" },
    });
    if (imported.status !== 201) return record("headDownloads", false, `the import: ${imported.status} ${imported.body.slice(0, 240)}`);
    const sid = JSON.parse(imported.body).sessionId;
    const heads = [];
    for (const route of ["messages", "events", "trace", "events/stream?after=0"]) {
      for (let i = 0; i < 5; i++) {
        const res = await request(base, new http.Agent(), "HEAD", `/api/sessions/${sid}/${route}`);
        heads.push(`${res.status}${res.headers?.["x-log-seq"] === undefined ? "" : ` x-log-seq ${res.headers["x-log-seq"]}`}`);
      }
    }
    // The imported session has messages and no event: the stream's GET, and so its HEAD, is 204.
    const stream = await request(base, new http.Agent(), "GET", `/api/sessions/${sid}/events/stream?after=0`);
    const got = await request(base, new http.Agent(), "GET", `/api/sessions/${sid}/messages`);
    const ids =
      got.status === 200
        ? got.body
            .split("\n")
            .filter(Boolean)
            .map((l) => JSON.parse(l).id)
        : [];
    record(
      "headDownloads",
      heads.every((h, i) => h === (i < 15 ? "200 x-log-seq 2" : "204")) &&
        stream.status === 204 &&
        got.status === 200 &&
        ids.join() === "m_1,m_2",
      `20 HEADs: ${[...new Set(heads)].join(", ")}; the stream's GET ${stream.status}; then GET .../messages ${got.status} ${ids.join(",")} in ${got.ms} ms`,
    );
  },

  /**
   * Event streams of one session that nobody reads (32 unread replays of a large log held 60 MB of
   * an isolate's 128): a session keeps 8 whose clients have read nothing for 5 s, and when another
   * stalls it ends the one stalled longest. Twelve clients that stop reading: four are let go within
   * seconds (those whose pipes filled first, not always the first opened), eight get the whole log
   * when they read again; a client that reads gets it meanwhile, and another request is answered
   * promptly.
   */
  async stalledStreams({ base, log }) {
    const agent = new http.Agent({ keepAlive: true });
    const { sessionId, logged } = await sessionWithLargeLog(base, agent, 20);
    const logFrom = log().length;
    const streamPath = `/api/sessions/${sessionId}/events/stream?after=0`;
    const held = [];
    for (let i = 0; i < 12; i++) {
      held.push(await unreadStream(base, streamPath));
      await new Promise((r) => setTimeout(r, 200));
    }
    const reader = request(base, new http.Agent(), "GET", streamPath, { timeoutMs: 60_000 });
    await new Promise((r) => setTimeout(r, 10_000));
    // Under load the pipes of twelve replays take longer to fill: wait for the server to say it ended four.
    const told = await streamsEnded(log, logFrom, 4, 30_000);
    const other = await request(base, agent, "GET", `/api/sessions/${sessionId}`);
    const read = await reader;
    // Read now, a stream ended meanwhile gives what it had sent before its end, one kept the whole log.
    const rest = await Promise.all(held.map(async (c) => (c.status === 200 ? sseEvents(await readRestOf(c)) : [])));
    agent.destroy();
    const lastSeq = JSON.parse(logged.at(-1)).seq;
    const ended = rest.map((events) => events.at(-1)?.seq !== lastSeq);
    const events = sseEvents(read.body);
    const whole = events.length === logged.length && events.every((e, i) => e.seq === JSON.parse(logged[i]).seq);
    const keptWhole = rest.every((events, i) => ended[i] || events.length === logged.length);
    record(
      "stalledStreams",
      held.every((c) => c.status === 200) &&
        // As many ended as the server says it ended for the bound: 12 - 8 = 4 when all twelve stalled,
        // fewer when a client's socket still drains a little every few seconds (it is not stalled then).
        ended.filter(Boolean).length === told &&
        told >= 1 &&
        told <= 4 &&
        keptWhole &&
        read.status === 200 &&
        whole &&
        other.status === 200 &&
        other.ms < 2000,
      `a log of ${logged.length} events (${(logged.join("\n").length / 1e6).toFixed(1)} MB); 12 streams that read nothing until the server logged ${told} ended (${[...new Set(held.map((c) => c.status))].join(",")}), then read: ${rest.map((events, i) => (ended[i] ? `ended at ${events.at(-1)?.seq ?? "-"}` : "whole")).join(", ")}; a reading client meanwhile ${read.status}, ${events.length} events${whole ? ", the whole log" : ", NOT the log"}; another request meanwhile ${other.status} in ${other.ms} ms`,
    );
  },

  /**
   * The same bound across sessions (objects of one class may share an isolate; `wrangler dev` runs
   * them all in one): the server keeps 16 stalled streams of all sessions together. Three sessions
   * with 6 unread streams each, 18 in all, within each session's 8: two are ended once all have
   * stalled (the check waits for the server's log line of each, and takes one when a client's socket
   * still drains), and the others get their session's whole log when they read again.
   */
  async stalledStreamsServer({ base, log }) {
    const agent = new http.Agent({ keepAlive: true });
    const sessions = await Promise.all([0, 1, 2].map(() => sessionWithLargeLog(base, agent, 12, 2_000_000, 4096)));
    const logFrom = log().length;
    const held = [];
    for (let i = 0; i < 6; i++) {
      for (const { sessionId, logged } of sessions) {
        held.push({ logged, client: await unreadStream(base, `/api/sessions/${sessionId}/events/stream?after=0`) });
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    // Until the server has logged the two ends (18 - 16), for at most 45 s: under load the pipes of
    // 18 replays of 25 MB take long to fill, and a fixed wait of 10, 15 or 25 s saw 0 or 1 stream
    // stalled (CI next to other work, 2026-12-04). Past 45 s the 60 s cutoff would come near.
    const told = await streamsEnded(log, logFrom, 2, 45_000);
    const other = await request(base, agent, "GET", `/api/sessions/${sessions[0].sessionId}`);
    const rest = await Promise.all(held.map(async ({ client }) => (client.status === 200 ? sseEvents(await readRestOf(client)) : [])));
    agent.destroy();
    const whole = rest.map((events, i) => {
      const { logged } = held[i];
      return events.length === logged.length && events.every((e, j) => e.seq === JSON.parse(logged[j]).seq);
    });
    record(
      "stalledStreamsServer",
      // 18 - 16 = 2 ended when all eighteen stalled; 1 when one client's socket still drained a little
      // (seen on a quiet CI machine, 2026-12-04): exactly those the server logged, never more than 2.
      held.every(({ client }) => client.status === 200) &&
        whole.filter((w) => !w).length === told &&
        told >= 1 &&
        told <= 2 &&
        other.status === 200 &&
        other.ms < 2000,
      `3 logs of ${sessions.map((s) => `${(s.logged.join("\n").length / 1e6).toFixed(1)} MB`).join(", ")}; 6 streams each that read nothing until the server logged ${told} ended (${[...new Set(held.map(({ client }) => client.status))].join(",")}), then read: ${rest.map((events, i) => (whole[i] ? "whole" : `session ${i % 3} ended at ${events.at(-1)?.seq ?? "-"}`)).join(", ")}; another request meanwhile ${other.status} in ${other.ms} ms`,
    );
  },

  /** After each refusal class, 20 requests in a row on the same connection answer promptly. */
  async refusals({ base, persistTo, tmp }) {
    // Object bytes live as files under v3/r2/<bucket>/blobs; an upload left behind keeps its parts there.
    // The local R2 deletes the blob files of removed objects in the background.
    const settle = () => new Promise((r) => setTimeout(r, 1000));
    const blobs = () => countFiles(path.join(persistTo, "v3", "r2"), "", "blobs");
    const bomb = gzipSync(Buffer.alloc(1024 * 1024 * 1024), { level: 9 });
    const cases = [
      ["gzip bomb (1 GiB of zeros)", "POST", "/api/workspaces", { body: bomb, headers: { "content-type": "application/gzip" } }, 422],
      [
        "chunked JSON over 256 KiB",
        "POST",
        "/api/sessions",
        {
          body: (req) => {
            req.write(Buffer.alloc(300 * 1024, 0x20));
            req.end();
          },
          headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
        },
        413,
      ],
      [
        "chunked 101 MiB upload",
        "POST",
        "/api/workspaces",
        {
          body: (req) => {
            req.write(tarHeader("big.bin", 101 * 1024 * 1024));
            const mb = Buffer.alloc(1024 * 1024, 7);
            for (let i = 0; i < 101; i++) req.write(mb);
            req.end();
          },
          headers: { "content-type": "application/x-tar", "transfer-encoding": "chunked" },
        },
        413,
      ],
      [
        "declared 101 MiB upload",
        "POST",
        "/api/workspaces",
        { body: Buffer.alloc(101 * 1024 * 1024, 7), headers: { "content-type": "application/x-tar" } },
        413,
      ],
      [
        "corrupt zip",
        "POST",
        "/api/workspaces",
        { body: Buffer.concat([Buffer.from("PK\x03\x04"), Buffer.alloc(4096, 9)]), headers: { "content-type": "application/zip" } },
        400,
      ],
      [
        "50,001-entry tar",
        "POST",
        "/api/workspaces",
        { body: tarOfEmptyFiles(50_001), headers: { "content-type": "application/x-tar" } },
        413,
      ],
      [
        "form post to a JSON route",
        "POST",
        "/api/sessions",
        { body: "title=x", headers: { "content-type": "application/x-www-form-urlencoded" } },
        415,
      ],
    ];
    // The counter must see what an accepted upload stores (pack, index, meta, and the search index's
    // directory and its one shard for a small tree), or it proves nothing.
    const accepted = blobs();
    // Text, so that the search index has a shard (binary files are listed but not indexed).
    const textDir = path.join(tmp, "control-text");
    fs.mkdirSync(textDir, { recursive: true });
    fs.writeFileSync(path.join(textDir, "a.txt"), "export const control = 1;\n");
    execFileSync("tar", ["-cf", path.join(tmp, "control-text.tar"), "-C", textDir, "."]);
    const upload = await request(base, new http.Agent(), "POST", "/api/workspaces", {
      body: fs.readFileSync(path.join(tmp, "control-text.tar")),
      headers: { "content-type": "application/x-tar" },
    });
    await settle();
    record(
      "refusals",
      upload.status === 201 && blobs() - accepted === 5,
      `control: an accepted upload (${upload.status}) left ${blobs() - accepted} blob files (pack chunk, index, meta, search directory and shard)`,
    );
    for (const [name, method, url, init, status] of cases) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      await settle();
      const before = blobs();
      const refusal = await request(base, agent, method, url, { ...init, timeoutMs: 60_000 });
      await settle();
      const left = blobs() - before;
      const after = await twentyInARow(base, agent);
      agent.destroy();
      const ok = refusal.status === status && after.bad === 0 && (url !== "/api/workspaces" || left === 0);
      record(
        "refusals",
        ok,
        `${name}: ${refusal.status} in ${refusal.ms} ms; next 20 requests: ${after.bad} failed, slowest ${after.slowest} ms${after.first ? ` (first failure: ${after.first})` : ""}; R2 blob files left: ${left}`,
      );
    }
  },

  /** A 600k-character answer in ~86k tiny deltas, then 20 requests in a row, five times. */
  async bigAnswer({ base }) {
    for (let t = 0; t < 5; t++) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      const { sessionId } = JSON.parse((await request(base, agent, "POST", "/api/sessions", json({}))).body);
      const run = await request(base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, {
        ...json({ text: "BIG 600000 7" }),
        timeoutMs: 120_000,
      });
      const events = sseEvents(run.body);
      const text = events
        .filter((e) => e.type === "assistant_delta")
        .map((e) => e.text)
        .join("");
      const after = await twentyInARow(base, agent);
      agent.destroy();
      const ok = run.status === 200 && events.at(-1)?.type === "agent_completed" && text.length === 600_000 && after.bad === 0;
      record(
        "bigAnswer",
        ok,
        `try ${t + 1}: run ${run.status} in ${run.ms} ms, ${events.length} events, ${text.length} characters; next 20: ${after.bad} failed, slowest ${after.slowest} ms`,
      );
    }
  },

  /** 100 sessions at once, 3 prompts each; no request may fail, every log must be complete. */
  async concurrency({ base }) {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
    const started = Date.now();
    const failures = [];
    let runs = 0;
    await Promise.all(
      Array.from({ length: 100 }, async (_, s) => {
        const created = await request(base, agent, "POST", "/api/sessions", json({ title: `c${s}` }), { timeoutMs: 60_000 });
        if (created.status !== 201) return failures.push(`create ${created.status}`);
        const { sessionId } = JSON.parse(created.body);
        for (let p = 0; p < 3; p++) {
          const run = await request(base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, {
            ...json({ text: `prompt ${p}` }),
            timeoutMs: 60_000,
          });
          runs++;
          const events = run.status === 200 ? sseEvents(run.body) : [];
          if (events.at(-1)?.type !== "agent_completed") failures.push(`${sessionId} prompt ${p}: ${run.status} ${run.body.slice(0, 120)}`);
        }
        const messages = await request(base, agent, "GET", `/api/sessions/${sessionId}/messages`, { timeoutMs: 60_000 });
        const kinds = messages.body
          .trim()
          .split("\n")
          .map((l) => JSON.parse(l).kind)
          .join(",");
        if (kinds !== "user,assistant,user,assistant,user,assistant") failures.push(`${sessionId} messages: ${kinds}`);
      }),
    );
    agent.destroy();
    record(
      "concurrency",
      failures.length === 0,
      `100 sessions x 3 prompts: ${runs} runs in ${Date.now() - started} ms, ${failures.length} failures${failures.length ? ` (${failures.slice(0, 3).join("; ")})` : ""}`,
    );
  },

  /** A large upload must not silence a running stream for a second or more. */
  async ingestVsStream({ base, tmp }) {
    const archive = makeTar(tmp, 98, 1024 * 1024);
    const agent = new http.Agent({ keepAlive: true });
    const { sessionId } = JSON.parse((await request(base, agent, "POST", "/api/sessions", json({}))).body);
    const arrivals = [];
    const stream = request(base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, {
      ...json({ text: "SLOW 80 100" }),
      timeoutMs: 60_000,
      onChunk: () => arrivals.push(Date.now()),
    });
    await new Promise((r) => setTimeout(r, 800));
    const uploadStart = Date.now();
    const upload = await request(base, agent, "POST", "/api/workspaces", {
      body: archive,
      headers: { "content-type": "application/x-tar" },
      timeoutMs: 120_000,
    });
    const uploadEnd = Date.now();
    await stream;
    agent.destroy();
    const during = arrivals.filter((t) => t >= uploadStart - 200 && t <= uploadEnd + 200);
    let gap = 0;
    let gapEnd = uploadStart;
    for (let i = 1; i < during.length; i++) {
      if (during[i] - during[i - 1] > gap) [gap, gapEnd] = [during[i] - during[i - 1], during[i]];
    }
    const ok = upload.status === 201 && gap < 1000;
    record(
      "ingestVsStream",
      ok,
      `${(archive.length / 1e6).toFixed(0)} MB tar ingested in ${uploadEnd - uploadStart} ms (${upload.status}); longest silence of the running stream meanwhile: ${gap} ms over ${during.length} chunks (ended ${gapEnd - uploadStart} ms into the upload)`,
    );
  },

  /**
   * A snapshot larger than one pack chunk (8 MiB): every file downloads byte for byte (several
   * cross a chunk boundary), grep through a session finds exactly what GNU grep finds on the same
   * tree, and both still hold after a kill -9 and restart.
   */
  async chunkedPack(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const dir = path.join(ctx.tmp, "chunked");
    fs.mkdirSync(dir, { recursive: true });
    const words = ["alpha", "beta", "gamma", "delta", "return", "const", "value"];
    for (let i = 0; i < 7; i++) {
      const lines = [];
      for (let n = 0, size = 0; size < 3_000_000; n++) {
        lines.push(n % 9973 === 0 ? `needle_${i} at line ${n + 1}` : `${words[(n * 7 + i) % 7]} ${n} ${words[(n * 3) % 7]};`);
        size += lines[n].length + 1;
      }
      fs.writeFileSync(path.join(dir, `f${i}.txt`), `${lines.join("\n")}\n`);
    }
    execFileSync("tar", ["-cf", path.join(ctx.tmp, "chunked.tar"), "-C", dir, "."]);
    const upload = await request(ctx.base, agent, "POST", "/api/workspaces", {
      body: fs.readFileSync(path.join(ctx.tmp, "chunked.tar")),
      headers: { "content-type": "application/x-tar" },
      timeoutMs: 60_000,
    });
    const { workspaceId } = JSON.parse(upload.body);
    const sha = (data) => createHash("sha256").update(data).digest("hex");
    // The slowest download, shown: one run of the whole campaign once spent 15 minutes in this check
    // (not seen again in isolation); a download that stalls now fails after 60 s instead of waiting.
    // In two full campaign runs of 2026-12-03 one of the seven parallel downloads stalled for the
    // whole 60 s (never alone, not explained yet): a stalled download is named in the detail and
    // asked for once more on a new connection; the check fails only if that one fails too.
    let slowest = 0;
    const stalls = [];
    const download = async (name) => {
      const get = (via) => request(ctx.base, via, "GET", `/api/workspaces/${workspaceId}/files/${name}`, { timeoutMs: 30_000 });
      let res = await get(agent);
      if (res.status !== 200) {
        stalls.push(`${name}: ${res.status} after ${res.ms} ms`);
        res = await get(new http.Agent());
      }
      slowest = Math.max(slowest, res.ms);
      // The files are ASCII text: their UTF-8 string hashes as their bytes do.
      return res.status === 200 && sha(res.body) === sha(fs.readFileSync(path.join(dir, name)));
    };
    const names = fs.readdirSync(dir).sort();
    const downloads = async () => (await Promise.all(names.map(download))).filter(Boolean).length;
    const expected = execFileSync("grep", ["-rn", "needle_", "."], { cwd: dir })
      .toString()
      .trim()
      .split("\n")
      .map((line) => line.replace(/^\.\//, ""))
      .sort();
    // With context lines too (GNU grep -C2; both print "--" between groups): the lines around a match
    // may lie in pieces of the file that the search did not need to read.
    const expectedContext = execFileSync("grep", ["-rn", "-C2", "needle_", "."], { cwd: dir })
      .toString()
      .trim()
      .split("\n")
      .map((line) => line.replace(/^\.\//, ""))
      .sort();
    const grep = async (context = 0) => {
      const { sessionId } = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body);
      const started = Date.now();
      await request(ctx.base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, {
        ...json({ text: `TOOL grep ${JSON.stringify({ pattern: "needle_", limit: 1000, ...(context ? { context } : {}) })}` }),
        timeoutMs: 60_000,
      });
      const ms = Date.now() - started;
      const jsonl = (await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/messages`)).body;
      const messages = jsonl
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line));
      const result = messages.find((m) => m.kind === "tool_result");
      const found = (result?.resultText ?? "")
        .split("\n")
        .map((line) => line.replace(/^(\S+?)([:-])(\d+)\2 /, "$1$2$3$2"))
        .sort();
      return { same: JSON.stringify(found) === JSON.stringify(context ? expectedContext : expected), ms };
    };
    const both = async () => {
      const plain = await grep();
      const withContext = await grep(2);
      return { same: plain.same && withContext.same, ms: plain.ms, context: withContext.same };
    };
    const before = { files: await downloads(), grep: await both() };
    const restartStarted = Date.now();
    await ctx.restart("SIGKILL");
    const restartMs = Date.now() - restartStarted;
    const after = { files: await downloads(), grep: await both() };
    agent.destroy();
    record(
      "chunkedPack",
      upload.status === 201 && [before, after].every((r) => r.files === names.length && r.grep.same),
      `${(fs.readFileSync(path.join(ctx.tmp, "chunked.tar")).length / 1e6).toFixed(1)} MB tar (${upload.status}); ` +
        `before / after kill -9: ${before.files} / ${after.files} of ${names.length} files byte-identical, grep equal to GNU grep (${expected.length} lines; ` +
        `with -C2 ${expectedContext.length} lines: ${before.grep.context} / ${after.grep.context}): ` +
        `${before.grep.same} / ${after.grep.same} (${before.grep.ms} / ${after.grep.ms} ms per prompt); slowest download ${slowest} ms, restart ${restartMs} ms` +
        (stalls.length > 0 ? `; STALLED then asked again: ${stalls.join(", ")}` : ""),
    );
  },

  /** Looking up sessions that do not exist creates no Durable Object storage. */
  async unknownIds({ base, persistTo }) {
    const agent = new http.Agent({ keepAlive: true });
    const dbs = () => countFiles(path.join(persistTo, "v3", "do"), ".sqlite");
    const before = dbs();
    let wrong = 0;
    for (let i = 0; i < 200; i++) {
      const id = `s_${Math.random().toString(36).slice(2)}${i}`;
      const res = await request(base, agent, "GET", `/api/sessions/${id}${["", "/messages", "/events"][i % 3]}`);
      if (res.status !== 404) wrong++;
    }
    const created = dbs() - before;
    agent.destroy();
    record(
      "unknownIds",
      wrong === 0 && created === 0,
      `200 GETs of random session ids: ${wrong} not 404, ${created} SQLite databases created`,
    );
  },

  /**
   * The failure-learning loop over HTTP: concurrent failing verdicts from many sessions become one case
   * with a count; the next run on the file gets the brief; bad input is refused; everything survives a
   * kill -9; a replay verifies the case and it is promoted.
   */
  async learning(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const { workspaceId } = await uploadTree(ctx.base, agent, path.join(ctx.tmp, "calc"), {
      "src/math.ts": "export const add = (a: number, b: number) => a + b;\n",
      "README.md": "# calc\n",
    });
    const P = "p_blackbox";
    const open = async () =>
      JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId, projectId: P }))).body).sessionId;
    const run = async (sessionId, text, options = {}) => {
      const res = await request(ctx.base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, {
        ...json({ text, ...options }),
        timeoutMs: 30_000,
      });
      return { runId: res.headers["x-run-id"], events: sseEvents(res.body) };
    };
    const judge = (sessionId, runId, result) =>
      request(
        ctx.base,
        agent,
        "POST",
        `/api/sessions/${sessionId}/judgements`,
        json({ runId, judgeName: "ci", result, artifactRefs: ["src/math.ts"], detail: "add(2,2) != 4" }),
      );
    const get = async (urlPath) => JSON.parse((await request(ctx.base, agent, "GET", urlPath, { timeoutMs: 30_000 })).body);
    const until = async (urlPath, ok) => {
      for (let i = 0; i < 100; i++) {
        const value = await get(urlPath);
        if (ok(value)) return value;
        await new Promise((r) => setTimeout(r, 100));
      }
      return get(urlPath);
    };
    const edit = `TOOL edit ${JSON.stringify({ path: "src/math.ts", oldText: "a + b", newText: "a - b" })}`;

    // Eight sessions make the same bad edit at once; CI fails all eight at once.
    const sessions = await Promise.all(Array.from({ length: 8 }, open));
    const runs = await Promise.all(sessions.map((s) => run(s, edit, { allowWrite: true })));
    const verdicts = await Promise.all(sessions.map((s, i) => judge(s, runs[i].runId, "fail")));
    const { cases } = await until(`/api/projects/${P}/cases`, (v) => v.cases?.[0]?.occurrences === 8);
    record(
      "learning",
      verdicts.every((v) => v.status === 201) && cases.length === 1 && cases[0].occurrences === 8,
      `8 concurrent failing verdicts: statuses ${[...new Set(verdicts.map((v) => v.status))].join(",")}; ${cases.length} case(s), occurrences ${cases[0]?.occurrences}`,
    );
    const caseId = cases[0]?.caseId;

    // The next run about the file is briefed; one about another file is not.
    ctx.model.requests.length = 0;
    const briefed = await run(await open(), "please review src/math.ts", { allowWrite: true });
    const briefedSystem = ctx.model.requests.at(-1)?.messages?.[0]?.content ?? "";
    const plain = await run(await open(), "please review README.md", { allowWrite: true });
    const plainSystem = ctx.model.requests.at(-1)?.messages?.[0]?.content ?? "";
    const injected = briefed.events.find((e) => e.type === "brief_injected");
    record(
      "learning",
      injected?.caseIds?.[0] === caseId &&
        briefedSystem.includes(cases[0]?.preventionHint) &&
        !plain.events.some((e) => e.type === "brief_injected") &&
        !plainSystem.includes("Failure Prevention Brief"),
      `brief on the file: ${injected ? "injected" : "missing"}; on another file: ${plain.events.some((e) => e.type === "brief_injected") ? "injected (wrong)" : "none"}`,
    );

    // Bad input: refused with its code, nothing stored.
    const bad = [
      [await judge(sessions[0], "r_nope", "fail"), 404, "run_not_found"],
      [await request(ctx.base, agent, "GET", "/api/projects/p_nobody/cases"), 404, "project_not_found"],
      [await request(ctx.base, agent, "GET", "/api/projects/..%2Fx/cases"), 400, "invalid_project_id"],
      [
        await request(ctx.base, agent, "POST", `/api/projects/${P}/memory/promote`, json({ caseId, write: true })),
        409,
        "promotion_not_verified",
      ],
      [
        await request(ctx.base, agent, "POST", `/api/projects/${P}/traces`, {
          body: '{"type":"action","run_id":"x","action_id":"a"}\n{oops\n',
          headers: { "content-type": "application/x-ndjson" },
        }),
        201,
        null,
      ],
    ];
    const wrong = bad.filter(([res, status, code]) => res.status !== status || (code && JSON.parse(res.body).error?.code !== code));
    const quarantine = (await get(`/api/projects/${P}/quarantine`)).quarantine ?? [];
    record(
      "learning",
      wrong.length === 0 && quarantine.length === 1 && quarantine[0].line === 2,
      `${bad.length - wrong.length}/${bad.length} refusals as documented; quarantine lines ${quarantine.map((q) => q.line).join(",")}`,
    );

    // A trace import under the size limit naming 100,000 runs (hunt 11: 71 s, the project held meanwhile):
    // it and a request to the same project made while it runs both answer in seconds.
    const lines = Array.from({ length: 100_000 }, (_, i) => `{"type":"span_start","run_id":"r${i}"}`).join("\n");
    const started = Date.now();
    const bigImport = request(ctx.base, new http.Agent(), "POST", `/api/projects/${P}/traces`, {
      body: lines,
      headers: { "content-type": "application/x-ndjson" },
      timeoutMs: 120_000,
    });
    await new Promise((r) => setTimeout(r, 200));
    const during = await request(ctx.base, agent, "GET", `/api/projects/${P}/cases`, { timeoutMs: 120_000 });
    const imported = await bigImport;
    const importMs = Date.now() - started;
    record(
      "learning.bigImport",
      imported.status === 201 && importMs < 10_000 && during.ms < 10_000,
      `100,000 runs in ${(lines.length / 1e6).toFixed(1)} MB: ${imported.status} in ${importMs} ms; the project's cases meanwhile in ${during.ms} ms (${during.status})`,
    );

    // kill -9, then: the case, the trace and the quarantine are still there; replay and promote.
    const traceBefore = (await request(ctx.base, agent, "GET", `/api/sessions/${sessions[0]}/trace`)).body;
    agent.destroy();
    await ctx.restart("SIGKILL");
    const after = new http.Agent({ keepAlive: true });
    const again = (urlPath, init) => request(ctx.base, after, init ? "POST" : "GET", urlPath, { ...(init ?? {}), timeoutMs: 30_000 });
    const casesAfter = JSON.parse((await again(`/api/projects/${P}/cases`)).body).cases;
    const traceAfter = (await again(`/api/sessions/${sessions[0]}/trace`)).body;
    const replay = JSON.parse((await again(`/api/projects/${P}/cases/${caseId}/replay`, json({}))).body).scorecard;
    const replayVerdict = await again(
      `/api/sessions/${replay?.replay?.sessionId}/judgements`,
      json({ runId: replay?.replay?.runId, judgeName: "ci", result: "fail", artifactRefs: ["src/math.ts"] }),
    );
    let status = "";
    for (let i = 0; i < 100 && status !== "passed"; i++) {
      status = JSON.parse((await again(`/api/projects/${P}/cases/${caseId}`)).body).scorecard?.status;
      if (status !== "passed") await new Promise((r) => setTimeout(r, 100));
    }
    const promoted = await again(`/api/projects/${P}/memory/promote`, json({ caseId, write: true }));
    const memory = JSON.parse((await again(`/api/projects/${P}/memory`)).body).rules ?? [];
    after.destroy();
    record(
      "learning",
      casesAfter?.[0]?.occurrences === 8 &&
        traceAfter === traceBefore &&
        traceBefore.length > 0 &&
        replay?.status === "pending" &&
        replayVerdict.status === 201 &&
        status === "passed" &&
        promoted.status === 201 &&
        memory.length === 1,
      `after kill -9: case occurrences ${casesAfter?.[0]?.occurrences}, trace ${traceAfter === traceBefore ? "identical" : "changed"}; replay ${replay?.status} -> ${status}; promote ${promoted.status}; memory ${memory.length} rule(s)`,
    );
  },

  /**
   * 20 concurrent follow-ups (each with an Idempotency-Key, one sent twice) while a run hangs, then
   * kill -9 and a restart: the interrupted run is closed and the 20 follow-ups run, once each, in the
   * order they were queued.
   */
  async queue(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const { sessionId } = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({}))).body);
    const streamPath = `/api/sessions/${sessionId}/messages/stream`;
    let seen = "";
    void request(ctx.base, agent, "POST", streamPath, { ...json({ text: "HANG" }), timeoutMs: 5_000, onChunk: (c) => (seen += c) });
    for (let i = 0; i < 100 && !seen.includes("assistant_delta"); i++) await new Promise((r) => setTimeout(r, 100));
    // Resolves when the answer's headers arrive (the stream itself would wait for the run).
    const send = (i) =>
      new Promise((resolve) => {
        const headers = { "content-type": "application/json", "idempotency-key": `bb-follow-${i}` };
        const req = http.request(`${ctx.base}${streamPath}`, { method: "POST", headers }, (res) => {
          resolve({ status: res.statusCode, runId: res.headers["x-run-id"] });
          res.destroy();
        });
        req.setTimeout(10_000, () => req.destroy(new Error("no answer")));
        req.on("error", (e) => resolve({ status: `ERR ${e.message}` }));
        req.end(JSON.stringify({ text: `follow ${i}`, whenBusy: "followUp" }));
      });
    const accepted = await Promise.all(Array.from({ length: 20 }, (_, i) => send(i)));
    const repeat = await send(0);
    const queued = JSON.parse((await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}`)).body).queue?.followUp ?? [];
    agent.destroy();
    await ctx.restart("SIGKILL");
    const after = new http.Agent({ keepAlive: true });
    const started = Date.now();
    let events = [];
    while (Date.now() - started < 60_000) {
      const res = await request(ctx.base, after, "GET", `/api/sessions/${sessionId}/events`, { timeoutMs: 30_000 });
      events =
        res.status === 200
          ? res.body
              .trim()
              .split("\n")
              .map((l) => JSON.parse(l))
          : [];
      if (events.filter((e) => e.type === "agent_completed").length >= 20) break;
      await new Promise((r) => setTimeout(r, 250));
    }
    const messages = (await request(ctx.base, after, "GET", `/api/sessions/${sessionId}/messages`)).body
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const users = messages.filter((m) => m.kind === "user");
    const queuedIds = events.filter((e) => e.type === "message_queued").map((e) => e.messageId);
    const ends = events.filter((e) => e.type === "agent_completed" || e.type === "agent_error");
    const replayed = sseEvents(
      (await request(ctx.base, after, "GET", `/api/sessions/${sessionId}/events/stream`, { timeoutMs: 30_000 })).body,
    );
    const ok =
      accepted.every((a) => a.status === 200) &&
      repeat.runId === accepted[0].runId &&
      queued.length === 20 &&
      ends[0]?.code === "run_interrupted" &&
      ends.slice(1).length === 20 &&
      ends.slice(1).every((e) => e.type === "agent_completed") &&
      users.length === 21 &&
      JSON.stringify(users.slice(1).map((m) => m.id)) === JSON.stringify(queuedIds) &&
      new Set(users.map((m) => m.text)).size === 21 &&
      replayed.length === events.length;
    record(
      "queue",
      ok,
      `${accepted.filter((a) => a.status === 200).length}/20 follow-ups accepted (repeated key -> ${repeat.runId === accepted[0].runId ? "same run" : "another run"}), ${queued.length} queued; after kill -9: ${ends[0]?.code ?? ends[0]?.type}, then ${ends.length - 1} runs in ${((Date.now() - started) / 1000).toFixed(1)} s, ${users.length} user messages, queue order ${JSON.stringify(users.slice(1).map((m) => m.id)) === JSON.stringify(queuedIds) ? "kept" : "BROKEN"}`,
    );
    after.destroy();
  },

  /**
   * Edges a bug hunt found over HTTP: a body nested 8,000 deep (was a 500 from a stack overflow), a
   * tool call on the workspace root (ended the run with internal_error), a stream asked for a run the
   * session does not have (was a 200 replay), and a steer that an abort turned into a follow-up (its
   * stream ended with the aborted run instead of following its message).
   */
  async edges(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const deepBody = `{"title":${"[".repeat(8000)}${"]".repeat(8000)}}`;
    const deep = await request(ctx.base, agent, "POST", "/api/sessions", {
      body: deepBody,
      headers: { "content-type": "application/json" },
    });
    const next = await request(ctx.base, agent, "GET", "/healthz");
    record(
      "edges.deepJson",
      deep.status === 400 && JSON.parse(deep.body).error?.code === "invalid_body" && next.status === 200,
      `8,000 levels: ${deep.status} ${deep.body.slice(0, 60)}; next request ${next.status}`,
    );

    const { workspaceId, tar } = await uploadTree(ctx.base, agent, path.join(ctx.tmp, "edges"), { "src/a.ts": "export const a = 1;\n" });
    const open = async (id = workspaceId) =>
      JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId: id }))).body).sessionId;
    const sessionId = await open();
    const rootRun = await promptEvents(ctx.base, agent, sessionId, { text: `TOOL read ${JSON.stringify({ path: "." })}` });
    const finished = rootRun.find((e) => e.type === "tool_call_finished");
    record(
      "edges.rootPath",
      rootRun.at(-1)?.type === "agent_completed" && finished?.error === true,
      `read "." -> ${finished ? `tool error ${finished.error}` : "no tool_call_finished"}, run ended with ${rootRun.at(-1)?.type} ${rootRun.at(-1)?.code ?? ""}`,
    );

    // Shell edits over an upload made like `git archive` (mode 0664): cp and mv onto existing files,
    // a file removed and written again with the same bytes; /changes must apply with git.
    const shellDir = path.join(ctx.tmp, "edges-shell");
    const shell = await uploadTree(ctx.base, agent, shellDir, { "a.txt": "alpha\n", "b.txt": "beta\n", "c.txt": "gamma\n" }, 0o664);
    const shellSession = await open(shell.workspaceId);
    const command =
      "cp b.txt c.txt && sed 's/beta/BETA/' b.txt > b.tmp && mv b.tmp b.txt && rm a.txt && printf 'alpha\\n' > a.txt && cat c.txt b.txt";
    const shellRun = await promptEvents(ctx.base, agent, shellSession, {
      text: `TOOL bash ${JSON.stringify({ command })}`,
      allowWrite: true,
      allowBash: true,
    });
    const diff = (await request(ctx.base, agent, "GET", `/api/sessions/${shellSession}/changes`)).body;
    let applied = "not applied";
    try {
      execFileSync("git", ["apply", "-"], { cwd: shellDir, input: diff, stdio: ["pipe", "ignore", "pipe"] });
      applied = ["a.txt", "b.txt", "c.txt"].map((f) => fs.readFileSync(path.join(shellDir, f), "utf8")).join("");
    } catch (err) {
      applied = `git apply failed: ${String(err.stderr ?? err)
        .trim()
        .slice(0, 120)}`;
    }
    const shellOk = shellRun.find((e) => e.type === "tool_call_finished")?.error === false && applied === "alpha\nBETA\nbeta\n";
    record(
      "edges.shellEdits",
      shellOk,
      `cp/mv onto existing files, a file re-created with its bytes: tool ${shellRun.find((e) => e.type === "tool_call_finished")?.error === false ? "ok" : "failed"}; /changes: ${JSON.stringify(applied)}`,
    );

    // A page of another site uploading through a no-cors request (auth is off here, as on a local npm run dev).
    const crossSite = await request(ctx.base, agent, "POST", "/api/workspaces", {
      body: tar,
      headers: { "content-type": "text/plain", origin: "https://evil.example.com" },
    });
    record(
      "edges.crossSiteWrite",
      crossSite.status === 403 && JSON.parse(crossSite.body).error?.code === "origin_not_allowed",
      `an upload from a page on another origin: ${crossSite.status} ${crossSite.body.slice(0, 60)}`,
    );

    // A page whose own name was pointed at 127.0.0.1 (DNS rebinding): its Origin matches its Host, so
    // only the host tells it apart; a loopback name is still answered.
    const port = new URL(ctx.base).port;
    const rebound = await request(ctx.base, agent, "GET", "/api/sessions", { headers: { host: `attacker.example:${port}` } });
    const reboundWrite = await request(ctx.base, agent, "POST", "/api/sessions", {
      ...json({}),
      headers: { "content-type": "application/json", host: `attacker.example:${port}`, origin: `http://attacker.example:${port}` },
    });
    const loopback = await request(ctx.base, agent, "GET", "/api/sessions", { headers: { host: `localhost:${port}` } });
    const hostCode = (res) => `${res.status} ${JSON.parse(res.body || "{}").error?.code ?? ""}`.trim();
    record(
      "edges.dnsRebinding",
      hostCode(rebound) === "403 host_not_allowed" && hostCode(reboundWrite) === "403 host_not_allowed" && loopback.status === 200,
      `Host attacker.example: read ${hostCode(rebound)}, write ${hostCode(reboundWrite)}; Host localhost: ${loopback.status}`,
    );

    const unknownRun = await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/events/stream?runId=r_01jd8x9a1b2c3d4e5f6g7h8j9k`);
    record(
      "edges.unknownRun",
      unknownRun.status === 404 && JSON.parse(unknownRun.body).error?.code === "run_not_found",
      `events/stream?runId=<unknown>: ${unknownRun.status}`,
    );

    const steered = await open();
    const streamPath = `/api/sessions/${steered}/messages/stream`;
    const hanging = (await hangingRun(ctx.base, agent, streamPath)).done;
    const steer = request(ctx.base, new http.Agent(), "POST", streamPath, {
      ...json({ text: "also this", whenBusy: "steer" }),
      timeoutMs: 30_000,
    });
    await new Promise((r) => setTimeout(r, 300));
    await request(ctx.base, agent, "POST", `/api/sessions/${steered}/abort`, json({}));
    await hanging;
    const frames = sseEvents((await steer).body);
    const ends = frames.filter((e) => e.type === "agent_completed").map((e) => `${e.runId}:${e.stopReason}`);
    const modes = frames.filter((e) => e.type === "message_queued").map((e) => e.mode);
    record(
      "edges.steerFollows",
      ends.length === 2 && ends[0].endsWith(":ABORTED") && ends[1].endsWith(":STOP") && modes.join() === "steer,followUp",
      `steer's stream: message_queued ${modes.join(" then ")}; runs ended ${ends.map((e) => e.split(":")[1]).join(", ")}`,
    );
    // Cut off at the old run's end, it resumes with its message to the end of the run that took it.
    const sent = frames.find((e) => e.type === "message_queued");
    const oldEnd = frames.find((e) => e.type === "agent_completed");
    const resumed = await request(
      ctx.base,
      agent,
      "GET",
      `/api/sessions/${steered}/events/stream?runId=${sent?.runId}&messageId=${sent?.messageId}`,
      {
        headers: { "last-event-id": String(oldEnd?.seq) },
        timeoutMs: 30_000,
      },
    );
    const rest = sseEvents(resumed.body).map((e) => e.seq);
    const want = frames.filter((e) => e.seq > oldEnd?.seq).map((e) => e.seq);
    record(
      "edges.steerResume",
      resumed.status === 200 && rest.length > 0 && rest.join() === want.join(),
      `resumed after ${oldEnd?.seq} with runId and messageId: ${resumed.status}, seqs ${rest.join(",")} (the uncut stream: ${want.join(",")})`,
    );
    agent.destroy();
  },

  /**
   * The shell against real bash (hunt 22) over a 3,000-file upload: a file moved out of its directory
   * and back lands in it (the emptied directory stays for the command), an executable keeps its bit
   * through /tmp, /dev/null keeps nothing, and loops that write and delete thousands of files finish
   * (each write rebuilt the whole tree before). The session's /changes, applied with `git apply` to
   * the upload, equals the tree real bash leaves from the same command, and the shell's `git status`,
   * `git diff --stat` and `git diff` say what real git says of that tree (stop 56).
   */
  async shellLikeBash(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const files = { "src/utils/log.ts": "export const log = 1;\n", "scripts/run.sh": "#!/bin/sh\necho run\n", "README.md": "# r\n" };
    for (let i = 0; i < 3000; i++) files[`many/d${i % 30}/f${i}.txt`] = `line ${i}\n`;
    const dir = path.join(ctx.tmp, "shell-like-bash");
    const { workspaceId } = await uploadTree(ctx.base, agent, dir, files, 0o644, { "scripts/run.sh": 0o755 });
    const sessionId = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body).sessionId;
    const scratch = `/tmp/run-${process.pid}-${Date.now()}.sh`;
    const command = [
      "mv src/utils/log.ts src/log.ts && mv src/log.ts src/utils/",
      `mv scripts/run.sh ${scratch} && mv ${scratch} scripts/run.sh`,
      "grep -r line many > /dev/null; cp /dev/null empty.log",
      "mkdir -p new && for a in $(seq 1 20); do for b in $(seq 1 100); do : > new/a$a-$b; done; done",
      "rm -r many/d1 && rm new/a1-* && sed -i s/line/LINE/ many/d2/*.txt",
      "wc -c < /dev/null",
    ].join(" && ");
    const events = await promptEvents(ctx.base, agent, sessionId, {
      text: `TOOL bash ${JSON.stringify({ command, timeoutMs: 60_000 })}`,
      allowWrite: true,
      allowBash: true,
    });
    const finished = events.find((e) => e.type === "tool_call_finished");
    const patch = (await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/changes`, { timeoutMs: 60_000 })).body;
    const copy = (name) => {
      const to = path.join(ctx.tmp, name);
      execFileSync("cp", ["-a", dir, to]);
      execFileSync("sh", ["-c", "git init -q && git add -A && git -c user.email=a@b -c user.name=a commit -qm up"], { cwd: to });
      return to;
    };
    const applied = copy("shell-applied");
    const real = copy("shell-real");
    fs.writeFileSync(path.join(ctx.tmp, "shell.patch"), patch);
    const applies = spawnSync("git", ["apply", path.join(ctx.tmp, "shell.patch")], { cwd: applied, encoding: "utf8" });
    execFileSync("bash", ["-c", command], { cwd: real, stdio: "ignore" });
    const tree = (root) =>
      execFileSync(
        "sh",
        [
          "-c",
          'find . -path ./.git -prune -o -type f -printf \'%P %m\\n\' | LC_ALL=C sort | while read p m; do echo "$p $m $(md5sum < "$p" | cut -c1-8)"; done',
        ],
        {
          cwd: root,
          encoding: "utf8",
          maxBuffer: 1 << 26,
        },
      ).replace(/ (7\d\d|6\d\d) /g, (_, m) => (m.startsWith("7") ? " x " : " - "));
    const [got, want] = [tree(applied), tree(real)];
    // The shell's git over the same changes says what real git says of the tree real bash left.
    const gitCommand =
      "git status --porcelain | md5sum; git diff --stat | md5sum; git diff --stat | tail -1; git diff | md5sum; git ls-files -o --exclude-standard | wc -l";
    // New connections: the kept-alive one idled through the local copies past the server's keep-alive
    // timeout, and a request on it failed with EPIPE (a client's race, not the server's answer).
    const gitAgent = new http.Agent({ keepAlive: false });
    await promptEvents(ctx.base, gitAgent, sessionId, { text: `TOOL bash ${JSON.stringify({ command: gitCommand })}`, allowBash: true });
    const gitGot =
      (await request(ctx.base, gitAgent, "GET", `/api/sessions/${sessionId}/messages`)).body
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .filter((m) => m.kind === "tool_result")
        .at(-1)?.resultText ?? "";
    const gitWant = execFileSync("bash", ["-c", gitCommand], { cwd: real, encoding: "utf8" }).trimEnd();
    const ok = finished?.error === false && applies.status === 0 && got === want && gitGot === gitWant;
    record(
      "shellLikeBash",
      ok,
      `bash: ${finished?.error === false ? "ok" : JSON.stringify(finished?.summary)}; git apply: ${applies.status === 0 ? "ok" : applies.stderr.slice(0, 200)}; tree ${
        got === want
          ? `equals real bash's (${want.split("\n").length - 1} files)`
          : `differs: ${got
              .split("\n")
              .filter((l) => !want.includes(l))
              .slice(0, 3)
              .join(" | ")}`
      }; git in the shell ${gitGot === gitWant ? `as real git (${gitWant.split("\n")[2]?.trim()})` : `${JSON.stringify(gitGot)} where real git gives ${JSON.stringify(gitWant)}`}`,
    );
    gitAgent.destroy();
    agent.destroy();
  },

  /**
   * Tools against what ripgrep and git do (hunt 16): a directory excluded by the root .gitignore and
   * re-included by a deeper one keeps its files; `[!_]` in a glob is a negated class; a pattern that
   * goes to RE2 takes JavaScript's `\u` escapes; the limit's last match keeps its trailing context.
   */
  /**
   * Text commands agents inspect code with, through `wrangler dev` (the bundle a deploy ships, with the
   * just-bash patch of `npm install`), against real bash on the same tree: every -e of grep, GNU's \+
   * and \?, context marks, awk's bare length, ls of several operands, read and mapfile of UTF-8 text,
   * a trailing "/" (hunts 75 and 76); grep -r into hidden directories with no file operand, awk's
   * one-character separators and numbers, cut -f, xargs -I (hunt 82). The output must be byte for byte
   * real bash's.
   */
  async shellTextLikeGnu(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const dir = path.join(ctx.tmp, "shell-text");
    const { workspaceId } = await uploadTree(ctx.base, agent, dir, {
      "app.ts": "const a = 1;\nconst PORT = 80;\nlisten(PORT)\nlistening()\n// TODO one\n// TODO: two\nmain();\n",
      "README.md": "# demo\nsee https://example.com and http://x.org/a\n",
      "uni.txt": "café\n日本語 한국어\n😀\n",
      "d/a.txt": "a\n",
      "d/b.txt": "b\n",
      "e/c.txt": "c\n",
      ".github/ci.yml": "runs-on: ubuntu\n",
      "v.txt": "1.22.3\n",
      "conf.txt": "# comment\nkey:value\n",
    });
    const sessionId = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body).sessionId;
    const command = [
      "grep -n -e TODO -e PORT app.ts",
      "grep -c 'https\\?://' README.md",
      "grep -n -C1 listen app.ts",
      "grep -nA1 TODO app.ts",
      "awk 'length > 14' app.ts",
      "ls d/*.txt | wc -l",
      "ls app.ts d e",
      `while IFS= read -r l; do echo "[$l] \${#l}"; done < uni.txt`,
      `mapfile -t L < uni.txt; echo "\${#L[@]} \${L[1]}"`,
      "grep -rl runs-on",
      "awk -F. '{print $NF, NF}' v.txt; awk 'BEGIN{print 1.5e-20, 2^60}'",
      "cut -d: -f2 conf.txt",
      "printf 'my file.txt\\n' | xargs -I {} echo '<{}>'",
      "mv d/a.txt nodir/ 2>/dev/null || echo refused; ls d",
    ].join("; echo --; ");
    await promptEvents(ctx.base, agent, sessionId, { text: `TOOL bash ${JSON.stringify({ command })}`, allowBash: true, allowWrite: true });
    const jsonl = (await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/messages`)).body;
    const got =
      jsonl
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line))
        .filter((m) => m.kind === "tool_result")
        .at(-1)?.resultText ?? "";
    // The shell's awk prints numbers as GNU awk does (`2^60` whole, where Debian's default mawk
    // prints 1.15292e+18): the reference runs GNU awk.
    const gnuAwk = gnuAwkPath(ctx.tmp);
    if (gnuAwk === null) {
      record("shellTextLikeGnu", false, "GNU awk is needed as the reference and was not found: apt-get install -y gawk");
      agent.destroy();
      return;
    }
    const want = execFileSync("bash", ["-c", command], {
      cwd: dir,
      encoding: "utf8",
      env: { ...process.env, LC_ALL: "C.UTF-8", PATH: `${gnuAwk}:${process.env.PATH}` },
    }).replace(/\n$/, "");
    const gotParts = got.split("\n--\n");
    const wantParts = want.split("\n--\n");
    const wrong = wantParts.map((part, i) => (gotParts[i] === part ? null : i)).filter((i) => i !== null);
    record(
      "shellTextLikeGnu",
      got === want,
      got === want
        ? `${wantParts.length}/${wantParts.length} commands as real bash`
        : wrong.map((i) => `${command.split("; echo --; ")[i]}: ${String(JSON.stringify(gotParts[i] ?? null)).slice(0, 100)}`).join("; "),
    );
    agent.destroy();
  },

  async toolsLikeRg(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const { workspaceId } = await uploadTree(ctx.base, agent, path.join(ctx.tmp, "tools-like-rg"), {
      ".gitignore": "build/\n",
      "sub/.gitignore": "!build/\n",
      "sub/build/f.txt": "needle here\n",
      "_private.py": "x = 1\n",
      "main.py": "x = 2\n",
      "q.txt": "\u2018quoted\u2019\n",
      "ctx.txt": "a\nb\nx1\nx2\nc\n",
    });
    const sessionId = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body).sessionId;
    const result = async (tool, args) => {
      await promptEvents(ctx.base, agent, sessionId, { text: `TOOL ${tool} ${JSON.stringify(args)}` });
      const jsonl = (await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/messages`)).body;
      return (
        jsonl
          .trim()
          .split("\n")
          .map((line) => JSON.parse(line))
          .filter((m) => m.kind === "tool_result")
          .at(-1)?.resultText ?? ""
      );
    };
    const got = {
      reincluded: await result("grep", { pattern: "needle" }),
      negatedGlob: await result("find", { pattern: "[!_]*.py" }),
      re2Escape: await result("grep", { pattern: "(?:\\u2018|\\u2019)+" }),
      limitContext: (await result("grep", { pattern: "x", path: "ctx.txt", context: 1, limit: 1 })).split("\n\n")[0],
    };
    const want = {
      reincluded: "sub/build/f.txt:1: needle here",
      negatedGlob: "main.py",
      re2Escape: "q.txt:1: \u2018quoted\u2019",
      limitContext: "ctx.txt-2- b\nctx.txt:3: x1\nctx.txt-4- x2",
    };
    const wrong = Object.keys(want).filter((k) => got[k] !== want[k]);
    record(
      "toolsLikeRg",
      wrong.length === 0,
      wrong.length === 0 ? "4/4 as rg and git" : wrong.map((k) => `${k}: ${JSON.stringify(got[k]).slice(0, 120)}`).join("; "),
    );
    agent.destroy();
  },

  /**
   * `/changes` and a fork of a session that copied 36 MB of snapshot files, deleted the originals and
   * created a file of 1,500 lines: once one answer past the 32 MiB RPC limit (500 for both), and hunks
   * of more than 1,000 lines had a header `git apply` refuses (`--1,0`). The diff must apply to the
   * uploaded tree, and the fork's diff must be the source's.
   */
  async changesLarge(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const dir = path.join(ctx.tmp, "changes-large");
    const lines = (c) => `${Array.from({ length: 12_000 }, (_, i) => String(i).padEnd(999, c)).join("\n")}\n`;
    const { workspaceId } = await uploadTree(ctx.base, agent, dir, {
      "a.txt": lines("a"),
      "b.txt": lines("b"),
      "c.txt": lines("c"),
      "keep.md": "kept\n",
    });
    const sessionId = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body).sessionId;
    const toolErrors = [];
    // Two commands: one command may write at most 32 MiB.
    for (const command of ["cp a.txt a2.txt && cp b.txt b2.txt", "cp c.txt c2.txt && rm a.txt b.txt c.txt && seq 1 1500 > new.txt"]) {
      const run = await promptEvents(ctx.base, agent, sessionId, {
        text: `TOOL bash ${JSON.stringify({ command })}`,
        allowWrite: true,
        allowBash: true,
      });
      toolErrors.push(run.find((e) => e.type === "tool_call_finished")?.error ?? "none");
    }
    const changes = await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/changes`, { timeoutMs: 60_000 });
    const fork = await request(ctx.base, agent, "POST", `/api/sessions/${sessionId}/fork`, { ...json({}), timeoutMs: 60_000 });
    const forkId = fork.status === 201 ? JSON.parse(fork.body).sessionId : null;
    const forkChanges = forkId
      ? await request(ctx.base, agent, "GET", `/api/sessions/${forkId}/changes`, { timeoutMs: 60_000 })
      : { status: "-", body: "" };
    const next = await request(ctx.base, agent, "GET", "/healthz");
    let applied = "not applied";
    if (changes.status === 200) {
      try {
        execFileSync("git", ["apply", "-"], { cwd: dir, input: changes.body, stdio: ["pipe", "ignore", "pipe"], maxBuffer: 1 << 30 });
        const left = fs.readdirSync(dir).sort().join(",");
        const seq = `${Array.from({ length: 1500 }, (_, i) => i + 1).join("\n")}\n`;
        const same = ["a", "b", "c"].every((c) => fs.readFileSync(path.join(dir, `${c}2.txt`), "utf8") === lines(c));
        applied = `${left}; copies ${same ? "equal" : "differ"}; new.txt ${fs.readFileSync(path.join(dir, "new.txt"), "utf8") === seq ? "= seq 1 1500" : "differs"}`;
      } catch (err) {
        applied = `git apply failed: ${String(err.stderr ?? err)
          .trim()
          .slice(0, 120)}`;
      }
    }
    const forkSame = forkChanges.status === 200 && forkChanges.body === changes.body;
    record(
      "changesLarge",
      toolErrors.every((e) => e === false) &&
        changes.status === 200 &&
        applied === "a2.txt,b2.txt,c2.txt,keep.md,new.txt; copies equal; new.txt = seq 1 1500" &&
        forkSame &&
        next.status === 200,
      `tools ${JSON.stringify(toolErrors)}; /changes ${changes.status}, ${(changes.body.length / 1e6).toFixed(1)} MB; git apply: ${applied}; fork ${fork.status}, its /changes ${forkChanges.status} ${forkSame ? "= the source's" : "differs"}; next request ${next.status}`,
    );
    agent.destroy();
  },

  /**
   * Paths are held in memory, so their characters are bounded (8 Mi per snapshot and per session's
   * changes): a tar of 2,300 files with 3,900-character paths is refused with 413
   * archive_too_many_files and not listed; a shell loop writing 4,000 files with 2,600-character
   * names stops at the budget with workspace_full in its result, and the session stays usable.
   */
  async longPaths(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const dir = path.join(ctx.tmp, "long-paths");
    const deep = Array.from({ length: 16 }, (_, i) => `${String(i).padStart(2, "0")}${"p".repeat(240)}`).join("/");
    fs.mkdirSync(path.join(dir, deep), { recursive: true });
    for (let i = 0; i < 2300; i++) fs.writeFileSync(path.join(dir, deep, `f${i}`), "");
    const tar = execFileSync("tar", ["-cf", "-", "-C", dir, "."], { maxBuffer: 1 << 30 });
    fs.rmSync(dir, { recursive: true });
    const before = JSON.parse((await request(ctx.base, agent, "GET", "/api/workspaces?limit=200")).body).items.length;
    const upload = await request(ctx.base, agent, "POST", "/api/workspaces", {
      body: tar,
      headers: { "content-type": "application/x-tar" },
    });
    const uploadCode = upload.status === 413 ? JSON.parse(upload.body).error.code : upload.body.slice(0, 120);
    const after = JSON.parse((await request(ctx.base, agent, "GET", "/api/workspaces?limit=200")).body).items.length;
    const small = await uploadTree(ctx.base, agent, path.join(ctx.tmp, "long-paths-small"), { "a.txt": "a\n" });
    const sessionId = JSON.parse(
      (await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId: small.workspaceId }))).body,
    ).sessionId;
    const command = `P=$(printf 'ab%.0s' $(seq 1 1300)); for i in $(seq 1 4000); do : > "$P$i"; done; echo made`;
    const events = await promptEvents(ctx.base, agent, sessionId, {
      text: `TOOL bash ${JSON.stringify({ command, timeoutMs: 60_000 })}`,
      allowWrite: true,
      allowBash: true,
    });
    const messages = (await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/messages`)).body
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const result = messages.find((m) => m.kind === "tool_result")?.resultText ?? "";
    const named = /would pass the 8388608 characters of paths this session's workspace changes may hold/.test(result);
    const diff = (await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/changes`, { timeoutMs: 60_000 })).body;
    const files = (diff.match(/^diff --git/gm) ?? []).length;
    const next = await promptEvents(ctx.base, agent, sessionId, { text: "hello" });
    agent.destroy();
    const ok =
      upload.status === 413 &&
      uploadCode === "archive_too_many_files" &&
      after === before &&
      events.some((e) => e.type === "agent_completed") &&
      named &&
      files === 3221 &&
      next.some((e) => e.type === "agent_completed");
    record(
      "longPaths",
      ok,
      `upload of 2,300 3,900-character paths: ${upload.status} ${uploadCode}, listed ${after - before}; shell loop: ${named ? "workspace_full named the path budget" : `result ${JSON.stringify(result.replace(/(ab){50,}/g, "<long>").slice(0, 200))}`}, ${files} files kept (3,221 expected); next prompt ${next.some((e) => e.type === "agent_completed") ? "completed" : "did not complete"}`,
    );
  },
  /**
   * A shell's `> f` opens `f` empty and then writes it, and `>> f` opens it before it appends: one
   * version of each file per command, not two (the 100,000 versions a session may hold stopped a
   * loop at 50,000 new files). Eight commands make 56,000 files and a loop appends 300 times; every
   * file is kept, find and grep -r walk them all, and a fork at the last message sees the same changes.
   */
  async shellVersions(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const { workspaceId } = await uploadTree(ctx.base, agent, path.join(ctx.tmp, "shell-versions"), { "a.txt": "a\n" });
    const sessionId = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body).sessionId;
    const commands = Array.from(
      { length: 8 },
      (_, k) => `mkdir -p d${k}; for i in $(seq 1 7000); do echo $i > d${k}/f$i; done; echo made ${k}`,
    );
    commands.push("for i in $(seq 1 300); do echo $i >> a.txt; done; wc -l < a.txt");
    // The shell walks all of them (its hardened profile stopped find and grep -r at 100,000 operations).
    commands.push("find . -type f | wc -l; grep -rl 7000 . | wc -l");
    let completed = 0;
    for (const command of commands) {
      const events = await promptEvents(ctx.base, agent, sessionId, {
        text: `TOOL bash ${JSON.stringify({ command, timeoutMs: 60_000 })}`,
        allowWrite: true,
        allowBash: true,
      });
      if (events.some((e) => e.type === "agent_completed")) completed++;
    }
    const results = (await request(ctx.base, agent, "GET", `/api/sessions/${sessionId}/messages`)).body
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((m) => m.kind === "tool_result")
      .map((m) => m.resultText.trim());
    const expected = [...commands.slice(0, 8).map((_, k) => `made ${k}`), "301", "56001\n8"];
    const diffOf = async (id) => (await request(ctx.base, agent, "GET", `/api/sessions/${id}/changes`, { timeoutMs: 60_000 })).body;
    const diff = await diffOf(sessionId);
    const files = (diff.match(/^diff --git/gm) ?? []).length;
    const fork = await request(ctx.base, agent, "POST", `/api/sessions/${sessionId}/fork`, { ...json({}), timeoutMs: 60_000 });
    const forkSame = fork.status === 201 && (await diffOf(JSON.parse(fork.body).sessionId)) === diff;
    agent.destroy();
    record(
      "shellVersions",
      completed === 10 && JSON.stringify(results) === JSON.stringify(expected) && files === 56_001 && forkSame,
      `${completed}/10 prompts completed; results ${JSON.stringify(results.map((r) => r.slice(0, 120)))}; /changes ${files} files (56,001 expected); fork ${fork.status}${fork.status === 201 ? "" : ` ${String(fork.body).slice(0, 240)}`}, its /changes ${forkSame ? "= the source's" : "differ"}`,
    );
  },
  /**
   * Inputs that used to hold the isolate for minutes (a backtracking grep pattern, texts joined by
   * `.*` on a long minified line, many-star and extglob globs, a prompt of one long word) now end at once, and the next request is answered; and streams and
   * imports a client retries.
   */
  async stalls(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const { workspaceId } = await uploadTree(ctx.base, agent, path.join(ctx.tmp, "stalls"), {
      "long.txt": `${"a".repeat(60)}\nxaab aac\n`,
      "bundle.min.js": `${"var a=function(){return 1};".repeat(4000)}\nreturn f(x);\n`,
      [`n/${"a".repeat(200)}`]: "x\n",
    });
    const open = async () => JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body).sessionId;
    const toolRun = async (tool, args) => {
      const events = await promptEvents(ctx.base, agent, await open(), { text: `TOOL ${tool} ${JSON.stringify(args)}` });
      const health = await request(ctx.base, agent, "GET", "/healthz");
      return { events, finished: events.find((e) => e.type === "tool_call_finished"), health: health.status };
    };
    const grep = await toolRun("grep", { pattern: "(a|aa)+c" });
    record(
      "stalls.grepBacktracking",
      grep.events.at(-1)?.type === "agent_completed" && grep.finished?.summary === "long.txt:2: xaab aac" && grep.health === 200,
      `grep (a|aa)+c over a line of 60 a: ${grep.events.at(-1)?.type}, ${JSON.stringify(grep.finished?.summary)}; /healthz ${grep.health}`,
    );
    const chain = await toolRun("grep", { pattern: "return.*\\(.+\\);" });
    record(
      "stalls.grepChain",
      chain.events.at(-1)?.type === "agent_completed" &&
        chain.finished?.summary === "bundle.min.js:2: return f(x);" &&
        chain.health === 200,
      `grep return.*\\(.+\\); over a 108 KB line with 4,000 of each: ${chain.events.at(-1)?.type}, ${JSON.stringify(chain.finished?.summary)}; /healthz ${chain.health}`,
    );
    // Globs of more than two wildcards run on RE2 (20 s on the 200-character name as a backtracking
    // regex); extglobs are plain text (hunt 43: this one held the isolate for minutes).
    for (const [name, pattern] of [
      ["stalls.globStars", "*a*a*a*a*b"],
      ["stalls.extglob", "@([!Z])*([!Z]|@(*([!Z])))Z"],
    ]) {
      const glob = await toolRun("find", { pattern });
      record(
        name,
        glob.events.at(-1)?.type === "agent_completed" && glob.finished?.error === false && glob.health === 200,
        `find ${pattern}: ${glob.events.at(-1)?.type}, error ${glob.finished?.error}, ${JSON.stringify(glob.finished?.summary?.slice(0, 60))}; /healthz ${glob.health}`,
      );
    }
    // A .gitignore rule of seven `**/a/` over a path 44 directories deep: about a minute a path as the
    // library's backtracking regex, on every find, grep and warm-up (hunt 54); on RE2 at once.
    const deep = Array.from({ length: 44 }, () => "a").join("/");
    const ignoring = await uploadTree(ctx.base, agent, path.join(ctx.tmp, "stalls-gitignore"), {
      ".gitignore": `${"**/a/".repeat(7)}**/z\n`,
      [`${deep}/f.txt`]: "x\n",
    });
    const ruled = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId: ignoring.workspaceId }))).body);
    const ruledEvents = await promptEvents(ctx.base, agent, ruled.sessionId, { text: `TOOL find ${JSON.stringify({ pattern: "f.txt" })}` });
    const ruledFind = ruledEvents.find((e) => e.type === "tool_call_finished");
    const ruledHealth = await request(ctx.base, agent, "GET", "/healthz");
    record(
      "stalls.gitignoreRule",
      ruledEvents.at(-1)?.type === "agent_completed" && ruledFind?.summary === `${deep}/f.txt` && ruledHealth.status === 200,
      `find under a .gitignore of seven **/a/, a path 44 deep: ${ruledEvents.at(-1)?.type}, ${JSON.stringify(ruledFind?.summary?.slice(-20))}; /healthz ${ruledHealth.status}`,
    );

    // A CPU-heavy shell command inside every just-bash limit (hunt 13: /healthz waited 9.6 s of its
    // 10 s): while it runs, another request is answered, and it ends at its own timeout. It hashes what
    // printf makes, as tee writes it (its writes give the event loop turns): a file read again and again
    // stops at the command's 32 MiB of reads (hunt 123).
    const command = "for i in $(seq 1 9000); do printf '%*s' 1000000 '' | tee /tmp/f | md5sum >/dev/null; done; echo ok";
    const started = Date.now();
    const heavy = promptEvents(ctx.base, new http.Agent(), await open(), {
      text: `TOOL bash ${JSON.stringify({ command, timeoutMs: 4000 })}`,
      allowBash: true,
    });
    await new Promise((r) => setTimeout(r, 1500));
    const during = await request(ctx.base, agent, "GET", "/healthz");
    const heavyEvents = await heavy;
    const heavyMs = Date.now() - started;
    const shell = heavyEvents.find((e) => e.type === "tool_call_finished");
    record(
      "stalls.bashCpu",
      during.status === 200 && during.ms < 1000 && heavyEvents.at(-1)?.type === "agent_completed" && shell?.error === true,
      `md5sum of 1 MB in a loop, timeoutMs 4000: /healthz meanwhile in ${during.ms} ms; the run ended ${heavyEvents.at(-1)?.type} after ${heavyMs} ms, the command ${JSON.stringify(shell?.summary?.slice(0, 60))}`,
    );

    const word = await promptEvents(ctx.base, agent, await open(), { text: "z".repeat(45_000) });
    record(
      "stalls.longWord",
      word.at(-1)?.type === "agent_completed",
      `a prompt of 45,000 characters without a space: ${word.at(-1)?.type}`,
    );

    // A follow-up withdrawn before its run starts: its stream says so.
    const busy = await open();
    const streamPath = `/api/sessions/${busy}/messages/stream`;
    const hanging = (await hangingRun(ctx.base, agent, streamPath)).done;
    const follow = request(ctx.base, new http.Agent(), "POST", streamPath, {
      ...json({ text: "later", whenBusy: "followUp" }),
      timeoutMs: 30_000,
    });
    let queued = [];
    for (let i = 0; i < 50 && queued.length === 0; i++) {
      queued = JSON.parse((await request(ctx.base, agent, "GET", `/api/sessions/${busy}`)).body).queue?.followUp ?? [];
      if (queued.length === 0) await new Promise((r) => setTimeout(r, 100));
    }
    await request(ctx.base, agent, "DELETE", `/api/sessions/${busy}/queue/${queued[0]}`);
    const followFrames = sseEvents((await follow).body);
    await request(ctx.base, agent, "POST", `/api/sessions/${busy}/abort`, json({}));
    await hanging;
    record(
      "stalls.withdrawnFollowUp",
      followFrames.map((e) => e.type).join() === "message_queued,queue_updated,queued_message_withdrawn",
      `a withdrawn follow-up's stream: ${followFrames.map((e) => e.type).join(", ")}`,
    );

    // A retried import with its Idempotency-Key is the same session.
    const exported = (await request(ctx.base, agent, "GET", `/api/sessions/${busy}/messages`)).body;
    const importOnce = () =>
      request(ctx.base, agent, "POST", "/api/sessions/import", {
        body: exported,
        headers: { "content-type": "application/x-ndjson", "idempotency-key": `import-${busy}` },
      });
    const [first, again] = [await importOnce(), await importOnce()];
    const ids = [first, again].map((r) => `${r.status}:${JSON.parse(r.body).sessionId}`);
    record("stalls.importRetried", first.status === 201 && ids[0] === ids[1], `the same import twice with one key: ${ids.join(" and ")}`);
    agent.destroy();
  },

  /**
   * What OpenAI-compatible servers really send (hunt 9): a whole JSON completion to a streaming
   * request, a refusal, a tool call named " ", and a 401 that echoes the key where the error clip
   * cuts it. Each run ends well, its export re-imports, and no start of the key is in any event.
   */
  async providers({ base }) {
    const agent = new http.Agent({ keepAlive: true });
    const open = async () => JSON.parse((await request(base, agent, "POST", "/api/sessions", json({}))).body).sessionId;
    const reimport = async (sessionId) => {
      const exported = await request(base, agent, "GET", `/api/sessions/${sessionId}/messages`);
      const imported = await request(base, agent, "POST", "/api/sessions/import", {
        body: exported.body,
        headers: { "content-type": "application/x-ndjson" },
      });
      return imported.status;
    };
    const answer = (events) =>
      events
        .filter((e) => e.type === "assistant_delta")
        .map((e) => e.text)
        .join("");

    const whole = await open();
    const wholeRun = await promptEvents(base, agent, whole, { text: "JSONANSWER" });
    record(
      "providers.jsonAnswer",
      wholeRun.at(-1)?.type === "agent_completed" && answer(wholeRun) === "the whole answer",
      `a JSON completion: ${wholeRun.at(-1)?.type} ${wholeRun.at(-1)?.code ?? ""}, answer ${JSON.stringify(answer(wholeRun))}`,
    );
    const refused = await open();
    const refusalRun = await promptEvents(base, agent, refused, { text: "REFUSAL" });
    record(
      "providers.refusal",
      refusalRun.at(-1)?.type === "agent_completed" && answer(refusalRun) === "I can't help with that.",
      `a refusal: ${refusalRun.at(-1)?.type}, answer ${JSON.stringify(answer(refusalRun))}`,
    );
    const blank = await open();
    const blankRun = await promptEvents(base, agent, blank, { text: "BLANKTOOL" });
    const denied = blankRun.find((e) => e.type === "tool_call_denied");
    const blankImport = await reimport(blank);
    record(
      "providers.blankToolName",
      blankRun.at(-1)?.type === "agent_completed" && denied !== undefined && blankImport === 201,
      `a tool call named " ": ${denied?.type ?? "no result event"} ${denied?.reason ?? ""}, run ${blankRun.at(-1)?.type} ${blankRun.at(-1)?.code ?? ""}, export re-imported ${blankImport}`,
    );
    // The key is "sk-blackbox": the message keeps 500 characters, so after 475 + " invalid api key: " it
    // keeps "sk-blac" and cuts there (too short for the sk- pattern, not the whole key).
    const echoed = await open();
    const echoRun = await promptEvents(base, agent, echoed, { text: "KEYECHO sk-blackbox 475" });
    const events = await request(base, agent, "GET", `/api/sessions/${echoed}/events`);
    const trace = await request(base, agent, "GET", `/api/sessions/${echoed}/trace`);
    const leaked = [JSON.stringify(echoRun), events.body, trace.body].some((text) => /sk-bla/.test(text));
    record(
      "providers.keyEcho",
      echoRun.at(-1)?.code === "auth_failed" && !leaked,
      `a 401 quoting the key at the clip: ${echoRun.at(-1)?.type} ${echoRun.at(-1)?.code}; a start of the key in the stream, events or trace: ${leaked}`,
    );
    agent.destroy();
  },

  /**
   * DELETE /api/workspaces/:wid: refused while a session uses it (nothing removed), then, once the
   * session is deleted, every blob of it goes; afterwards it is 404 and no session opens on it.
   */
  async workspaceDelete({ base, persistTo, tmp }) {
    const agent = new http.Agent({ keepAlive: true });
    // Earlier checks' sessions may still be flushing log segments to R2 in the background, so the
    // workspace's blobs are named (the files its upload added once the store was quiet), not counted.
    const blobs = () => listFiles(path.join(persistTo, "v3", "r2"), "blobs");
    const quiet = async () => {
      for (let last = blobs().size, i = 0; i < 20; i++) {
        await new Promise((r) => setTimeout(r, 500));
        const now = blobs().size;
        if (now === last) return;
        last = now;
      }
    };
    // A flush that lands during the upload adds a blob of its own: then the upload is measured again.
    let workspaceId;
    let added = [];
    for (let attempt = 0; attempt < 3 && added.length !== 5; attempt++) {
      if (workspaceId) await request(base, agent, "DELETE", `/api/workspaces/${workspaceId}`);
      await quiet();
      const before = blobs();
      ({ workspaceId } = await uploadTree(base, agent, path.join(tmp, `ws-delete-${attempt}`), {
        "a.txt": "alpha\n",
        "src/b.ts": "export {};\n",
      }));
      added = [...blobs()].filter((f) => !before.has(f));
    }
    const stored = added.length;
    const sessionId = JSON.parse((await request(base, agent, "POST", "/api/sessions", json({ workspaceId }))).body).sessionId;
    const inUse = await request(base, agent, "DELETE", `/api/workspaces/${workspaceId}`);
    const stillRead = await request(base, agent, "GET", `/api/sessions/${sessionId}/files/a.txt`);
    await request(base, agent, "DELETE", `/api/sessions/${sessionId}`);
    const deleted = await request(base, agent, "DELETE", `/api/workspaces/${workspaceId}`);
    // The local R2 removes a deleted object's blob file in the background.
    let left = stored;
    for (let i = 0; i < 20 && left > 0; i++) {
      await new Promise((r) => setTimeout(r, 250));
      left = added.filter((f) => fs.existsSync(f)).length;
    }
    const read = await request(base, agent, "GET", `/api/workspaces/${workspaceId}`);
    const reopen = await request(base, agent, "POST", "/api/sessions", json({ workspaceId }));
    const again = await request(base, agent, "DELETE", `/api/workspaces/${workspaceId}`);
    const code = (res) => `${res.status} ${JSON.parse(res.body || "{}").error?.code ?? ""}`.trim();
    record(
      "workspaceDelete",
      code(inUse) === "409 workspace_in_use" &&
        stillRead.status === 200 &&
        deleted.status === 204 &&
        stored === 5 &&
        left === 0 &&
        code(read) === "404 workspace_not_found" &&
        code(reopen) === "404 workspace_not_found" &&
        code(again) === "404 workspace_not_found",
      `in use: ${code(inUse)} (the session still reads it: ${stillRead.status}); after its session: ${deleted.status}, blob files ${stored} -> ${left}; then GET ${code(read)}, a new session ${code(reopen)}, DELETE again ${code(again)}`,
    );
    agent.destroy();
  },

  /** kill -9 while the model is mid-answer and while a tool call runs; restart; the history is closed and accepted. */
  /**
   * Deleting a project: refused while a session learns into it; then its cases and quarantine are
   * gone (404), trace imports racing the deletion either land before it (and go with it) or are
   * 404, and the id named again starts empty, also after a restart.
   */
  async projectDelete(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const lines = (run, n) =>
      Array.from({ length: n }, (_, i) =>
        [
          JSON.stringify({ type: "action", runId: `${run}-${i}`, actionId: "a1", tool: "edit", writes: [`app/x${i}.py`] }),
          "{broken",
          JSON.stringify({
            type: "judge_result",
            runId: `${run}-${i}`,
            judgeName: "pytest",
            result: "fail",
            artifactRefs: [`app/x${i}.py`],
          }),
        ].join("\n"),
      ).join("\n");
    const importTraces = (run, n) =>
      request(ctx.base, agent, "POST", "/api/projects/p_bb_gone/traces", {
        body: lines(run, n),
        headers: { "content-type": "application/x-ndjson" },
      });
    const listed = async (what) => {
      const res = await request(ctx.base, agent, "GET", `/api/projects/p_bb_gone/${what}?limit=100`);
      return res.status === 200 ? JSON.parse(res.body)[what].length : res.status;
    };
    const { sessionId } = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ projectId: "p_bb_gone" }))).body);
    const imported = (await importTraces("r", 30)).status;
    const before = { cases: await listed("cases"), quarantine: await listed("quarantine") };
    const refused = await request(ctx.base, agent, "DELETE", "/api/projects/p_bb_gone");
    await request(ctx.base, agent, "DELETE", `/api/sessions/${sessionId}`);
    const [deleted, ...racing] = await Promise.all([
      request(ctx.base, agent, "DELETE", "/api/projects/p_bb_gone"),
      ...[1, 2, 3].map((i) => importTraces(`c${i}`, 20)),
    ]);
    const gone = { cases: await listed("cases"), again: (await request(ctx.base, agent, "DELETE", "/api/projects/p_bb_gone")).status };
    await ctx.restart("SIGKILL");
    await request(ctx.base, agent, "POST", "/api/sessions", json({ projectId: "p_bb_gone" }));
    const named = { cases: await listed("cases"), quarantine: await listed("quarantine") };
    agent.destroy();
    const errorCode = (res) => {
      try {
        return JSON.parse(res.body).error?.code ?? "";
      } catch {
        return "";
      }
    };
    record(
      "projectDelete",
      imported === 201 &&
        before.cases === 30 &&
        before.quarantine === 30 &&
        refused.status === 409 &&
        errorCode(refused) === "project_in_use" &&
        deleted.status === 204 &&
        racing.every((r) => r.status === 201 || (r.status === 404 && errorCode(r) === "project_not_found")) &&
        gone.cases === 404 &&
        gone.again === 404 &&
        named.cases === 0 &&
        named.quarantine === 0,
      `30 cases and 30 quarantined lines; while a session learns into it: ${refused.status} ${errorCode(refused)}; ` +
        `after the session: ${deleted.status}, with 3 imports racing it: ${racing.map((r) => r.status).join(" ")}; ` +
        `cases then ${gone.cases}, DELETE again ${gone.again}; named again after kill -9: ${named.cases} cases, ${named.quarantine} quarantined`,
    );
  },

  async crash(ctx) {
    const agent = new http.Agent({ keepAlive: true });
    const upload = await request(ctx.base, agent, "POST", "/api/workspaces", {
      body: makeTar(ctx.tmp, 2, 1024),
      headers: { "content-type": "application/x-tar" },
    });
    const { workspaceId } = JSON.parse(upload.body);
    const sessions = {};
    for (const [name, text, options] of [
      ["mid-stream", "HANG", {}],
      ["mid-tool-call", `TOOL bash ${JSON.stringify({ command: "sleep 50", timeoutMs: 60_000 })}`, { allowBash: true, timeoutMs: 300_000 }],
    ]) {
      const { sessionId } = JSON.parse((await request(ctx.base, agent, "POST", "/api/sessions", json({ workspaceId }))).body);
      sessions[name] = sessionId;
      let seen = "";
      void request(ctx.base, agent, "POST", `/api/sessions/${sessionId}/messages/stream`, {
        ...json({ text, ...options }),
        timeoutMs: 5_000,
        onChunk: (c) => (seen += c),
      });
      const waitFor = name === "mid-stream" ? "assistant_delta" : "tool_call_started";
      for (let i = 0; i < 100 && !seen.includes(waitFor); i++) await new Promise((r) => setTimeout(r, 100));
    }
    agent.destroy();
    await ctx.restart("SIGKILL");
    const after = new http.Agent({ keepAlive: true });
    for (const [name, sessionId] of Object.entries(sessions)) {
      const events = (await request(ctx.base, after, "GET", `/api/sessions/${sessionId}/events`, { timeoutMs: 30_000 })).body
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const messages = (await request(ctx.base, after, "GET", `/api/sessions/${sessionId}/messages`)).body
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const last = messages.at(-1);
      // The trace of the cut-off run is ended too: its open action observed, its run span ended with run_interrupted.
      const trace = (await request(ctx.base, after, "GET", `/api/sessions/${sessionId}/trace`)).body
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const runEnd = trace.find((r) => r.type === "span_end" && r.kind === "run");
      const openActions = trace.filter(
        (r) => r.type === "action" && !trace.some((o) => o.type === "observation" && o.actionId === r.actionId),
      );
      ctx.model.requests.length = 0;
      const next = await request(ctx.base, after, "POST", `/api/sessions/${sessionId}/messages/stream`, {
        ...json({ text: "hello again" }),
        timeoutMs: 30_000,
      });
      const sent = ctx.model.requests.at(-1)?.messages ?? [];
      const unanswered = sent.flatMap((m, i) =>
        (m.tool_calls ?? []).filter((c) => !sent.slice(i + 1).some((r) => r.role === "tool" && r.tool_call_id === c.id)),
      );
      const ok =
        events.at(-1)?.type === "agent_error" &&
        events.at(-1)?.code === "run_interrupted" &&
        last.stopReason === "ERROR" &&
        (name !== "mid-stream" || last.text === "partial answer ") &&
        unanswered.length === 0 &&
        runEnd?.stopReason === "run_interrupted" &&
        openActions.length === 0 &&
        sseEvents(next.body).at(-1)?.type === "agent_completed";
      record(
        "crash",
        ok,
        `${name}: closed with ${events.at(-1)?.code} (trace: run ended ${runEnd?.stopReason}, ${openActions.length} action(s) left open), closing message text ${JSON.stringify(last.text)}, ${messages.filter((m) => m.kind === "tool_result").length} tool result(s); next prompt sent ${unanswered.length} unanswered tool call(s) and ended ${sseEvents(next.body).at(-1)?.type}`,
      );
    }
    after.destroy();
  },
};

/** Longest a check may take (the slowest take about 2 minutes on a loaded machine). */
const CHECK_TIMEOUT_MS = 8 * 60_000;

async function main() {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pi-harness-blackbox-"));
  const persistTo = path.join(tmp, "state");
  const model = await startFakeModel();
  const port = await freePort();
  const modelUrl = `http://127.0.0.1:${model.port}/v1`;
  let dev = await startDevServer({ port, persistTo, modelUrl });
  const ctx = {
    base: dev.base,
    persistTo,
    tmp,
    model,
    /** What the server has logged so far (stdout and stderr of wrangler dev). */
    log: () => dev.log(),
    restart: async (signal) => {
      await dev.stop(signal);
      dev = await startDevServer({ port, persistTo, modelUrl });
    },
  };
  console.log(`wrangler dev on ${dev.base}, state in ${persistTo}, fake model on ${modelUrl}`);
  try {
    for (const [name, check] of Object.entries(checks)) {
      if (only && !only.includes(name)) continue;
      const started = Date.now();
      let deadline;
      try {
        // A check that hangs (a stream that neither ends nor fails) fails, and the campaign goes on.
        await Promise.race([
          check(ctx),
          new Promise((_, reject) => {
            deadline = setTimeout(() => reject(new Error(`did not finish within ${CHECK_TIMEOUT_MS / 60_000} minutes`)), CHECK_TIMEOUT_MS);
          }),
        ]);
      } catch (err) {
        record(name, false, `threw: ${err.stack ?? err}`);
      } finally {
        clearTimeout(deadline);
      }
      console.log(`     (${name}: ${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
  } finally {
    await dev.stop("SIGTERM");
    model.server.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok);
  console.log(`\n${results.length - failed.length} of ${results.length} black-box checks passed`);
  process.exit(failed.length ? 1 : 0);
}

await main();

/** A directory whose `awk` is GNU awk (the system's own when it is, else `gawk` linked as `awk`), or null without one. */
function gnuAwkPath(tmp) {
  const version = (bin) => spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout ?? "";
  const awk = spawnSync("bash", ["-c", "command -v awk"], { encoding: "utf8" }).stdout.trim();
  if (awk !== "" && version(awk).startsWith("GNU Awk")) return path.dirname(awk);
  const gawk = spawnSync("bash", ["-c", "command -v gawk"], { encoding: "utf8" }).stdout.trim();
  if (gawk === "" || !version(gawk).startsWith("GNU Awk")) return null;
  const dir = path.join(tmp, "gnu-awk");
  fs.mkdirSync(dir, { recursive: true });
  fs.rmSync(path.join(dir, "awk"), { force: true });
  fs.symlinkSync(gawk, path.join(dir, "awk"));
  return dir;
}
