import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createApp } from "../../src/api/app";
import { counterIds, type RUN_ERROR_CODES } from "../../src/domain";
import { useLogLevel } from "../../src/log";
import { runEndLine } from "../../src/session/run-ending";
import { DurableSessionStore } from "../../src/session/session-store";
import { T0, userMessage } from "../helpers/records";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, jsonResponse, sse, sseResponse, usageChunk } from "../model/helpers";
import { tarOf } from "../workspace/archives";

/**
 * The Worker with LOG_LEVEL=info. The level is the isolate's, and the test bindings say warn: the
 * session object sets warn when it is constructed, so each test creates its session first and then
 * sends the prompt through this app, which sets info again before the run.
 */
const app = createApp();
const infoEnv = { ...env, LOG_LEVEL: "info" };
const api = (path: string, init?: RequestInit) => app.fetch(new Request(`http://localhost${path}`, init), infoEnv);
const json = (body: unknown): RequestInit => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});
const store = new DurableSessionStore(env);

type Logged = { via: "log" | "warn" | "error"; line: Record<string, unknown> };

/** Every log line written from now on, with the console method that wrote it. */
function captureLog(): Logged[] {
  const lines: Logged[] = [];
  for (const via of ["log", "warn", "error"] as const)
    vi.spyOn(console, via).mockImplementation((line: string) => lines.push({ via, line: JSON.parse(line) as Record<string, unknown> }));
  return lines;
}

/** The lines named `msg`, once there are `count` of them (a run's end is logged just after its stream ends). */
async function linesNamed(lines: Logged[], msg: string, count = 1): Promise<Logged[]> {
  await vi.waitFor(() => expect(lines.filter((l) => l.line.msg === msg).length).toBeGreaterThanOrEqual(count));
  return lines.filter((l) => l.line.msg === msg);
}

async function sessionWith(body: Record<string, unknown>, answer: () => Response): Promise<string> {
  const created = await api("/api/sessions", json(body));
  expect(created.status).toBe(201);
  const { sessionId } = (await created.json()) as { sessionId: string };
  useSessionDeps(sessionId, { ids: counterIds(), modelFetch: async () => answer() });
  return sessionId;
}

async function prompt(sessionId: string, text: string): Promise<Record<string, unknown>> {
  const res = await api(`/api/sessions/${sessionId}/messages/stream`, json({ text }));
  expect(res.status).toBe(200);
  return (await readSse(res)).frames.at(-1)!.data;
}

afterEach(() => {
  vi.restoreAllMocks();
  useLogLevel(env.LOG_LEVEL);
});

describe("one log line per run end", () => {
  it("a completed run: info, with its duration, turns, tool calls and tokens", async () => {
    const sessionId = await sessionWith({}, () =>
      sseResponse(sse([chunk({ content: "secret answer text" }), chunk({}, "stop"), usageChunk(12, 3)])),
    );
    const lines = captureLog();
    const end = await prompt(sessionId, "a prompt that must not be logged");
    expect(end.type).toBe("agent_completed");
    expect(await linesNamed(lines, "run ended")).toEqual([
      {
        via: "log",
        line: {
          level: "info",
          msg: "run ended",
          sessionId,
          runId: end.runId,
          outcome: "completed",
          stopReason: "STOP",
          ms: expect.any(Number),
          turns: 1,
          toolCalls: 0,
          tokens: 15,
        },
      },
    ]);
    const all = JSON.stringify(lines);
    expect(all).not.toContain("secret answer text");
    expect(all).not.toContain("must not be logged");
  });

  it("a run the provider refused (401): a warning with auth_failed, and neither the key nor the message", async () => {
    const sessionId = await sessionWith({}, () => jsonResponse(401, { error: { message: `invalid api key ${env.OPENAI_API_KEY}` } }));
    const lines = captureLog();
    const end = await prompt(sessionId, "hello");
    expect(end).toMatchObject({ type: "agent_error", code: "auth_failed" });
    expect(await linesNamed(lines, "run ended")).toEqual([
      {
        via: "warn",
        line: {
          level: "warn",
          msg: "run ended",
          sessionId,
          runId: end.runId,
          outcome: "error",
          code: "auth_failed",
          stopReason: "ERROR",
          ms: expect.any(Number),
          turns: 1,
          toolCalls: 0,
        },
      },
    ]);
    expect(JSON.stringify(lines)).not.toContain(env.OPENAI_API_KEY!);
  });

  it("a run whose workspace cannot be opened (internal_error): one error line, with the cause's stack", async () => {
    const tar = await tarOf({ "a.txt": "x\n" });
    const upload = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const sessionId = await sessionWith({ workspaceId }, () => sseResponse(sse([chunk({ content: "hi" }), chunk({}, "stop")])));
    // The snapshot's index is damaged in R2 (a partial restore).
    await env.STORE.put(`workspaces/${workspaceId}/index.json`, "{{{{");
    const lines = captureLog();
    const end = await prompt(sessionId, "hello");
    expect(end).toMatchObject({ type: "agent_error", code: "internal_error" });
    const [ended] = await linesNamed(lines, "run ended");
    expect(ended).toEqual({
      via: "error",
      line: {
        level: "error",
        msg: "run ended",
        sessionId,
        runId: end.runId,
        outcome: "error",
        code: "internal_error",
        stopReason: "ERROR",
        ms: expect.any(Number),
        turns: 0,
        toolCalls: 0,
        error: expect.stringMatching(/^SyntaxError: .*\n\s+at /),
      },
    });
    // The cause is logged once: no other line names the run at error level.
    expect(lines.filter((l) => l.via === "error" && l.line.runId === end.runId)).toHaveLength(1);
  });
});

describe("recovery after a restart", () => {
  it("logs one warning per run it closes", async () => {
    const { id } = await store.create({});
    await store.appendMessage(id, userMessage(id, "m_u"));
    await runInDurableObject(store.stub(id), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO runs (run_id, status, started_at, start_seq) VALUES ('r_dead', 'running', ?, 1)`, T0);
    });
    useSessionDeps(id, { ids: counterIds() });
    await abortAllDurableObjects();
    const lines = captureLog();
    expect((await store.info(id))!.status).toBe("idle");
    expect(lines.filter((l) => /restart/.test(String(l.line.msg)))).toEqual([
      { via: "warn", line: { level: "warn", msg: "run interrupted by a restart, closed", sessionId: id, runId: "r_dead" } },
    ]);
  });

  it("logs one warning for a manual compaction it closes", async () => {
    const { id } = await store.create({});
    await runInDurableObject(store.stub(id), (_instance, state) => {
      state.storage.sql.exec(`INSERT INTO open_compaction (id) VALUES (1)`);
    });
    useSessionDeps(id, { ids: counterIds() });
    await abortAllDurableObjects();
    const lines = captureLog();
    await store.info(id);
    expect(lines.filter((l) => /restart/.test(String(l.line.msg)))).toEqual([
      { via: "warn", line: { level: "warn", msg: "compaction interrupted by a restart, closed", sessionId: id } },
    ]);
  });
});

describe("the level of a run's end", () => {
  const level = (code?: (typeof RUN_ERROR_CODES)[number]) =>
    runEndLine("s_1", "r_1", { stopReason: code ? "ERROR" : "STOP", ...(code ? { error: { code, message: "m" } } : {}) }, 5).level;

  it("info for the user's or the run's own limits, warn for the provider, error for the harness", () => {
    expect(level()).toBe("info");
    expect(runEndLine("s_1", "r_1", { stopReason: "ABORTED" }, 5).level).toBe("info");
    for (const code of ["run_timeout", "max_turns_reached", "run_aborted", "replay_exhausted"] as const) expect(level(code)).toBe("info");
    for (const code of ["auth_failed", "provider_error", "rate_limited", "context_overflow", "network_error"] as const)
      expect(level(code)).toBe("warn");
    for (const code of ["internal_error", "history_unreadable"] as const) expect(level(code)).toBe("error");
  });

  it("never carries an error's message; a cause only when given", () => {
    const line = runEndLine("s_1", "r_1", { stopReason: "ERROR", error: { code: "provider_error", message: "upstream said: secret" } }, 7);
    expect(line).toEqual({
      level: "warn",
      msg: "run ended",
      fields: { sessionId: "s_1", runId: "r_1", outcome: "error", code: "provider_error", stopReason: "ERROR", ms: 7 },
    });
  });
});
