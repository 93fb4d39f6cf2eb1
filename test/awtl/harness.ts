import { env, exports } from "cloudflare:workers";
import { expect } from "vitest";
import { createApp } from "../../src/api/app";
import type { AttributionRecord, TraceRecord } from "../../src/domain";
import { readSse, type SseFrame } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, sse, sseResponse } from "../model/helpers";
import { tarOf } from "../workspace/archives";

/** The snapshot the loop's tests work on: a tiny TypeScript project with a test. */
export const PROJECT_FILES: Record<string, string> = {
  "README.md": "# calc\nA tiny calculator. Run the tests with `npm test`.\n",
  "package.json": '{ "name": "calc", "scripts": { "test": "node test/math.test.js" } }\n',
  "src/math.ts":
    "export function add(a: number, b: number): number {\n  return a + b;\n}\n\nexport function mul(a: number, b: number): number {\n  return a * b;\n}\n",
  "src/util.ts": "export const clamp = (x: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, x));\n",
  "src/format.ts": "export const money = (cents: number) => `$${(cents / 100).toFixed(2)}`;\n",
  "test/math.test.js": "// add(2, 2) must be 4\n",
  "docs/guide.md": "# Guide\nUse add and mul.\n",
};

/** One answer of the fake provider. */
export type Answer = () => Response | Promise<Response>;

export interface ToolCallSpec {
  id: string;
  name: string;
  args: unknown;
}

export const model = {
  /** A turn that calls tools (OpenAI chunk format). */
  tools:
    (...calls: ToolCallSpec[]): Answer =>
    () =>
      sseResponse(
        sse([
          ...calls.map((c, index) =>
            chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }] }),
          ),
          chunk({}, "tool_calls"),
        ]),
      ),
  text:
    (text: string): Answer =>
    () =>
      sseResponse(sse([chunk({ content: text }), chunk({}, "stop")])),
  /** A text answer in several deltas (each chunk one of `parts`). */
  deltas:
    (...parts: string[]): Answer =>
    () =>
      sseResponse(sse([...parts.map((content) => chunk({ content })), chunk({}, "stop")])),
  /** The provider refuses the key: `auth_failed` at once (no retry). */
  unauthorized: (): Answer => () => new Response(JSON.stringify({ error: { message: "bad key" } }), { status: 401 }),
  /** 429 asking for a wait longer than the client waits: `rate_limited` at once. */
  rateLimited: (): Answer => () =>
    new Response(JSON.stringify({ error: { message: "slow down" } }), { status: 429, headers: { "retry-after": "3600" } }),
  /** The provider refuses the request (a 400 that is not about the context window): `bad_request`. */
  badRequest: (): Answer => () => new Response(JSON.stringify({ error: { message: "unsupported parameter" } }), { status: 400 }),
  /** Headers, then nothing at all: the provider never answers (until the run's time runs out). */
  silent: (): Answer => () => sseResponse(new ReadableStream<Uint8Array>()),
  /** The start of a `write` call (its id, name and the first of its arguments), then nothing: a slow answer under way. */
  stalledCall: (): Answer => () => {
    const head = sse(
      [
        chunk({
          tool_calls: [
            { index: 0, id: "w1", type: "function", function: { name: "write", arguments: '{"path":"big.txt","content":"line 1' } },
          ],
        }),
      ],
      { done: false },
    );
    return sseResponse(
      new ReadableStream<Uint8Array>({
        start: (controller) => controller.enqueue(new TextEncoder().encode(head)),
      }),
    );
  },
  /** Text, then an error inside the stream: `provider_error` (nothing is retried once output was produced). */
  brokenStream: (): Answer => () =>
    sseResponse(sse([chunk({ content: "Let me" }), { error: { message: "upstream overloaded" } }], { done: false })),
};

/** The API of the test Worker, optionally with an env override (AUTH_TOKENS). */
export function client(overrides: Partial<typeof env> = {}, token?: string) {
  const app = Object.keys(overrides).length > 0 ? createApp() : null;
  return (path: string, init: RequestInit = {}) => {
    const headers = new Headers(init.headers);
    if (token) headers.set("authorization", `Bearer ${token}`);
    const request = new Request(`http://localhost${path}`, { ...init, headers });
    return app
      ? app.fetch(request, { ...env, ...overrides }, {
          waitUntil() {},
          passThroughOnException() {},
          props: {},
        } as unknown as ExecutionContext)
      : exports.default.fetch(request);
  };
}

export type Api = ReturnType<typeof client>;

export const post = (body: unknown): RequestInit => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});

export async function uploadWorkspace(api: Api, files: Record<string, string> = PROJECT_FILES): Promise<string> {
  const res = await api("/api/workspaces", { method: "POST", body: await tarOf(files), headers: { "content-type": "application/x-tar" } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { workspaceId: string }).workspaceId;
}

/** The requests the fake provider received, per session. */
export interface ModelLog {
  requests: { messages: { role: string; content: unknown }[]; tools?: unknown[] }[];
}

/** Opens a session whose model answers from `answers` in order (shared across its runs). */
export async function openSession(api: Api, opts: { workspaceId?: string; projectId?: string; answers?: Answer[] } = {}) {
  const res = await api("/api/sessions", post({ workspaceId: opts.workspaceId, projectId: opts.projectId }));
  expect(res.status).toBe(201);
  const { sessionId } = (await res.json()) as { sessionId: string };
  const log: ModelLog = { requests: [] };
  const answers = [...(opts.answers ?? [])];
  useSessionDeps(sessionId, {
    modelFetch: async (_input, init) => {
      log.requests.push(JSON.parse(String(init?.body)));
      const answer = answers.shift();
      if (!answer) return model.text("(no more scripted answers)")();
      return answer();
    },
  });
  return { sessionId, log, answers };
}

/** Sends a prompt and reads the run's stream to its end. */
export async function prompt(api: Api, sessionId: string, body: Record<string, unknown>): Promise<{ runId: string; frames: SseFrame[] }> {
  const res = await api(`/api/sessions/${sessionId}/messages/stream`, post(body));
  expect(res.status).toBe(200);
  const runId = res.headers.get("x-run-id")!;
  const { frames } = await readSse(res);
  return { runId, frames };
}

export async function traceOf(api: Api, sessionId: string): Promise<TraceRecord[]> {
  const res = await api(`/api/sessions/${sessionId}/trace`);
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as TraceRecord);
}

/** Every attribution of a session, its pages followed to the last. */
export async function attributionsOf(api: Api, sessionId: string): Promise<AttributionRecord[]> {
  const all: AttributionRecord[] = [];
  for (let cursor: string | null = null; ; ) {
    const res = await api(`/api/sessions/${sessionId}/attributions${cursor === null ? "" : `?cursor=${cursor}`}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { attributions: AttributionRecord[]; nextCursor: string | null };
    all.push(...page.attributions);
    if (page.nextCursor === null) return all;
    cursor = page.nextCursor;
  }
}

/** The action id of the tool call `callId` in a trace. */
export function actionOfCall(trace: TraceRecord[], callId: string): string {
  const action = trace.find((r) => r.type === "action" && r.callId === callId);
  if (action?.type !== "action") throw new Error(`no action for call ${callId}`);
  return action.actionId;
}

/** Waits until the project has handed-over cases (delivery runs after the response, in waitUntil). */
export async function casesOf(
  api: Api,
  projectId: string,
  atLeast = 1,
): Promise<{ caseId: string; occurrences: number; preventionHint: string; [k: string]: unknown }[]> {
  for (let i = 0; i < 100; i++) {
    const res = await api(`/api/projects/${projectId}/cases`);
    expect(res.status).toBe(200);
    const { cases } = (await res.json()) as { cases: { caseId: string; occurrences: number; preventionHint: string }[] };
    if (cases.length >= atLeast) return cases;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`project ${projectId} got fewer than ${atLeast} case(s)`);
}

/** The system prompt the provider got in request `n` (0-based). */
export function systemPromptOf(log: ModelLog, n: number): string {
  const system = log.requests[n]!.messages.find((m) => m.role === "system");
  return String(system?.content ?? "");
}
