import { env, exports } from "cloudflare:workers";
import { counterIds } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, sse, sseResponse, usageChunk } from "../model/helpers";

export const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
export const store = new DurableSessionStore(env);

export const prompt = (id: string, body: unknown, headers: Record<string, string> = {}) =>
  api(`/api/sessions/${id}/messages/stream`, {
    method: "POST",
    body: JSON.stringify(body),
    headers: { "content-type": "application/json", ...headers },
  });

export const postJson = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json", ...headers } });

/** One model answer, given the request body the model received. */
export type Answer = (body: ModelBody) => Response | Promise<Response>;
export interface ModelBody {
  model: string;
  messages: { role: string; content: string | null; tool_calls?: unknown[] }[];
}

/** The text of the last user message of a model request. */
export const lastUser = (body: ModelBody) => [...body.messages].reverse().find((m) => m.role === "user")!.content!;

export const textAnswer =
  (...parts: string[]): Answer =>
  () =>
    sseResponse(sse([...parts.map((p) => chunk({ content: p })), chunk({}, "stop"), usageChunk(12, 3)]));

export const echoAnswer: Answer = (body) => textAnswer(`answer to ${lastUser(body)}`)(body);

export const toolCallAnswer =
  (id: string, name: string, args: Record<string, unknown>): Answer =>
  () =>
    sseResponse(
      sse([
        chunk({ tool_calls: [{ index: 0, id, type: "function", function: { name, arguments: JSON.stringify(args) } }] }),
        chunk({}, "tool_calls"),
      ]),
    );

/** A gate the test opens: the model answer waits for it (polling, since I/O cannot cross objects). */
export function gate() {
  const state = { open: false };
  return {
    open: () => {
      state.open = true;
    },
    wait: async (signal?: AbortSignal | null) => {
      while (!state.open && !signal?.aborted) await new Promise((r) => setTimeout(r, 5));
    },
  };
}

/**
 * A session (optionally created through `create`) whose model answers come from `answer(body, n)`
 * (n: 1-based request number); every request body is recorded.
 */
export async function sessionWithModel(answer: (body: ModelBody, n: number, signal?: AbortSignal | null) => Response | Promise<Response>) {
  const res = await postJson("/api/sessions", {});
  const { sessionId } = (await res.json()) as { sessionId: string };
  const requests: ModelBody[] = [];
  useSessionDeps(sessionId, {
    ids: counterIds(),
    modelFetch: async (_input, init) => {
      const body = JSON.parse(String(init?.body)) as ModelBody;
      requests.push(body);
      return answer(body, requests.length, init?.signal);
    },
  });
  return { sessionId, requests };
}

export async function until(check: () => Promise<boolean> | boolean, what: string, tries = 400): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

/**
 * A session whose first run is under way and held: its model call waits for `first.open()` (or for
 * the run's abort), so prompts sent meanwhile find the session busy. `running` is that prompt's answer.
 */
export async function sessionWithHeldRun(text: string) {
  const first = gate();
  const { sessionId, requests } = await sessionWithModel(async (body, n, signal) => {
    if (n === 1) await first.wait(signal);
    return echoAnswer(body);
  });
  const running = prompt(sessionId, { text });
  await until(async () => (await store.info(sessionId))!.status === "running", "the run");
  return { sessionId, requests, first, running };
}
