import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, sse, sseResponse } from "../model/helpers";
import { tarOf } from "../workspace/archives";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const json = (body: unknown): RequestInit => ({
  method: "POST",
  body: JSON.stringify(body),
  headers: { "content-type": "application/json" },
});
const store = new DurableSessionStore(env);

/** One model turn that calls tools (OpenAI chunk format, one call per index). */
const toolTurn = (calls: { id: string; name: string; args: unknown }[]) => () =>
  sseResponse(
    sse([
      ...calls.map((c, index) =>
        chunk({ tool_calls: [{ index, id: c.id, type: "function", function: { name: c.name, arguments: JSON.stringify(c.args) } }] }),
      ),
      chunk({}, "tool_calls"),
    ]),
  );
const textTurn = (text: string) => () => sseResponse(sse([chunk({ content: text }), chunk({}, "stop")]));

async function workspaceSession(answers: (() => Response)[]) {
  const tar = await tarOf({ "README.md": "# Demo\nhello world\n", "src/a.ts": "export const a = 1;\nexport const b = 2;\n" });
  const upload = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
  expect(upload.status).toBe(201);
  const { workspaceId } = (await upload.json()) as { workspaceId: string };
  const created = await api("/api/sessions", json({ workspaceId }));
  expect(created.status).toBe(201);
  const { sessionId } = (await created.json()) as { sessionId: string };
  const requests: Record<string, unknown>[] = [];
  useSessionDeps(sessionId, {
    ids: counterIds(),
    modelFetch: async (_input, init) => {
      requests.push(JSON.parse(String(init?.body)));
      const answer = answers[requests.length - 1];
      if (!answer) throw new Error("unexpected model request");
      return answer();
    },
  });
  return { workspaceId, sessionId, requests };
}

describe("an agent run over an uploaded workspace", () => {
  it("reads, greps and edits through the overlay; the snapshot never changes; /changes is a unified diff", async () => {
    const { workspaceId, sessionId, requests } = await workspaceSession([
      toolTurn([
        { id: "call_read", name: "read", args: { path: "README.md" } },
        { id: "call_grep", name: "grep", args: { pattern: "const b" } },
      ]),
      toolTurn([{ id: "call_edit", name: "edit", args: { path: "src/a.ts", oldText: "const b = 2", newText: "const b = 3" } }]),
      textTurn("Changed b to 3."),
    ]);
    const { frames } = await readSse(
      await api(`/api/sessions/${sessionId}/messages/stream`, json({ text: "set b to 3", allowWrite: true })),
    );
    expect(frames.map((f) => f.data.type)).toEqual([
      "agent_started",
      "user_message_appended",
      "assistant_completed",
      "tool_call_started",
      "tool_call_finished",
      "tool_call_started",
      "tool_call_finished",
      "assistant_completed",
      "tool_call_started",
      "tool_call_finished",
      "assistant_delta",
      "assistant_completed",
      "agent_completed",
    ]);
    expect(frames.filter((f) => f.data.type === "tool_call_finished").map((f) => [f.data.callId, f.data.error])).toEqual([
      ["call_read", false],
      ["call_grep", false],
      ["call_edit", false],
    ]);
    // The model was offered the write tools because the run allowed them, and got the results back.
    expect((requests[0]!.tools as { function: { name: string } }[]).map((t) => t.function.name)).toEqual([
      "read",
      "ls",
      "grep",
      "find",
      "write",
      "edit",
    ]);
    const results = (await store.loadMessages(sessionId)).filter((m) => m.kind === "tool_result");
    expect(results.map((m) => m.kind === "tool_result" && [m.toolCallId, m.error])).toEqual([
      ["call_read", false],
      ["call_grep", false],
      ["call_edit", false],
    ]);
    expect(results[0]!.kind === "tool_result" && results[0]!.resultText).toBe("# Demo\nhello world");
    expect(results[1]!.kind === "tool_result" && results[1]!.resultText).toBe("src/a.ts:2: export const b = 2;");

    expect(await (await api(`/api/sessions/${sessionId}/files/src/a.ts`)).text()).toBe("export const a = 1;\nexport const b = 3;\n");
    expect(await (await api(`/api/workspaces/${workspaceId}/files/src/a.ts`)).text()).toBe("export const a = 1;\nexport const b = 2;\n");
    const changes = await api(`/api/sessions/${sessionId}/changes`);
    expect(changes.headers.get("content-type")).toBe("text/x-diff; charset=utf-8");
    expect(await changes.text()).toBe(
      [
        "diff --git a/src/a.ts b/src/a.ts",
        "--- a/src/a.ts",
        "+++ b/src/a.ts",
        "@@ -1,2 +1,2 @@",
        " export const a = 1;",
        "-export const b = 2;",
        "+export const b = 3;",
        "",
      ].join("\n"),
    );
  });

  it("bash works on the same view and writes to the overlay only when writes are allowed", async () => {
    const { sessionId } = await workspaceSession([
      toolTurn([{ id: "call_sh", name: "bash", args: { command: "grep -c const src/a.ts && echo made > notes.txt && rm README.md" } }]),
      textTurn("done"),
      toolTurn([{ id: "call_ro", name: "bash", args: { command: "echo nope > blocked.txt" } }]),
      textTurn("could not"),
    ]);
    await readSse(await api(`/api/sessions/${sessionId}/messages/stream`, json({ text: "shell", allowBash: true, allowWrite: true })));
    const first = (await store.loadMessages(sessionId)).find((m) => m.kind === "tool_result")!;
    expect(first.kind === "tool_result" && [first.error, first.resultText]).toEqual([false, "2"]);
    expect(await (await api(`/api/sessions/${sessionId}/files/notes.txt`)).text()).toBe("made\n");
    expect((await api(`/api/sessions/${sessionId}/files/README.md`)).status).toBe(404);
    expect(await (await api(`/api/sessions/${sessionId}/changes`)).text()).toBe(
      [
        "diff --git a/README.md b/README.md",
        "deleted file mode 100644",
        "--- a/README.md",
        "+++ /dev/null",
        "@@ -1,2 +0,0 @@",
        "-# Demo",
        "-hello world",
        "diff --git a/notes.txt b/notes.txt",
        "new file mode 100644",
        "--- /dev/null",
        "+++ b/notes.txt",
        "@@ -0,0 +1,1 @@",
        "+made",
        "",
      ].join("\n"),
    );

    // Bash without allowWrite: the shell runs, but the write is refused and nothing reaches the overlay.
    await readSse(await api(`/api/sessions/${sessionId}/messages/stream`, json({ text: "again", allowBash: true })));
    const second = (await store.loadMessages(sessionId)).filter((m) => m.kind === "tool_result").at(-1)!;
    expect(second.kind === "tool_result" && second.error).toBe(true);
    expect(second.kind === "tool_result" && second.resultText).toContain("EROFS");
    expect((await api(`/api/sessions/${sessionId}/files/blocked.txt`)).status).toBe(404);
  });

  it("a read-only run denies write with write_not_allowed and never executes it", async () => {
    const { sessionId } = await workspaceSession([
      toolTurn([{ id: "call_w", name: "write", args: { path: "x.txt", content: "x" } }]),
      textTurn("I may not write."),
    ]);
    const { frames } = await readSse(await api(`/api/sessions/${sessionId}/messages/stream`, json({ text: "write x" })));
    const denied = frames.find((f) => f.data.type === "tool_call_denied")!;
    expect(denied.data).toMatchObject({ callId: "call_w", tool: "write", reason: "write_not_allowed" });
    expect(frames.some((f) => f.data.type === "tool_call_finished")).toBe(false);
    expect((await api(`/api/sessions/${sessionId}/files/x.txt`)).status).toBe(404);
    expect(await (await api(`/api/sessions/${sessionId}/changes`)).text()).toBe("");
  });

  it("session routes for files refuse escapes and sessions without a workspace", async () => {
    const { sessionId } = await workspaceSession([]);
    const escaped = await api(`/api/sessions/${sessionId}/files/..%2F..%2Fetc%2Fpasswd`);
    expect(escaped.status).toBe(400);
    expect(((await escaped.json()) as { error: { code: string } }).error.code).toBe("path_escape");
    const bare = (await (await api("/api/sessions", json({}))).json()) as { sessionId: string };
    const none = await api(`/api/sessions/${bare.sessionId}/changes`);
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { code: string } }).error.code).toBe("no_workspace");
  });

  it("serves files whose names hold a line break or a tab, from the snapshot and from the session", async () => {
    const tar = await tarOf({ "new\nline.txt": "two\nlines\n", "tab\there.txt": "tab\n" });
    const upload = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const { sessionId } = (await (await api("/api/sessions", json({ workspaceId }))).json()) as { sessionId: string };
    for (const base of [`/api/workspaces/${workspaceId}`, `/api/sessions/${sessionId}`]) {
      const newline = await api(`${base}/files/new%0Aline.txt`);
      expect([newline.status, await newline.text()]).toEqual([200, "two\nlines\n"]);
      const tab = await api(`${base}/files/tab%09here.txt`);
      expect([tab.status, await tab.text()]).toEqual([200, "tab\n"]);
    }
  });

  it("a session cannot be opened on a workspace that does not exist", async () => {
    const res = await api("/api/sessions", json({ workspaceId: "w_doesnotexist" }));
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("workspace_not_found");
  });
});

describe("replay: model replay:<sessionId>", () => {
  it("re-runs a recorded session's turns against the current tools, with no model call", async () => {
    const recorded = await workspaceSession([
      toolTurn([{ id: "call_grep", name: "grep", args: { pattern: "hello" } }]),
      textTurn("Found it in README.md."),
    ]);
    await readSse(await api(`/api/sessions/${recorded.sessionId}/messages/stream`, json({ text: "find hello" })));

    const replayed = await workspaceSession([]); // any model request would throw
    const { frames } = await readSse(
      await api(`/api/sessions/${replayed.sessionId}/messages/stream`, json({ text: "find hello", model: `replay:${recorded.sessionId}` })),
    );
    expect(replayed.requests).toEqual([]);
    expect(frames.map((f) => f.data.type).at(-1)).toBe("agent_completed");
    const strip = (messages: Awaited<ReturnType<typeof store.loadMessages>>) =>
      messages.map((m) =>
        m.kind === "assistant"
          ? [m.kind, m.text, m.toolCalls ?? []]
          : m.kind === "tool_result"
            ? [m.kind, m.toolCallId, m.resultText]
            : m.kind === "user"
              ? [m.kind, m.text]
              : [m.kind, m.summary],
      );
    expect(strip(await store.loadMessages(replayed.sessionId))).toEqual(strip(await store.loadMessages(recorded.sessionId)));
  });

  it("a replay source of another tenant is not readable", async () => {
    const app = (await import("../../src/api/app")).createApp();
    const authed = { ...env, AUTH_TOKENS: "acme:tok-a,globex:tok-g" };
    const call = (path: string, token: string, body: unknown) =>
      app.fetch(
        new Request(`http://localhost${path}`, {
          method: "POST",
          body: JSON.stringify(body),
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        }),
        authed,
      );
    const acme = (await (await call("/api/sessions", "tok-a", {})).json()) as { sessionId: string };
    const globex = (await (await call("/api/sessions", "tok-g", {})).json()) as { sessionId: string };
    const { frames } = await readSse(
      await call(`/api/sessions/${globex.sessionId}/messages/stream`, "tok-g", { text: "x", model: `replay:${acme.sessionId}` }),
    );
    expect(frames.at(-1)!.data).toMatchObject({ type: "agent_error", code: "replay_load_failed" });
    expect(String(frames.at(-1)!.data.message)).toContain(`session '${acme.sessionId}' does not exist`);
  });
});
