import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { readConversation, readConversationBody } from "../../src/api/conversation-import";
import {
  type AgentMessage,
  HarnessError,
  MAX_IMPORT_BYTES,
  MAX_IMPORTED_COST,
  MAX_IMPORTED_ID_CHARS,
  MAX_IMPORTED_TOKENS,
  MAX_JSON_DEPTH,
  MAX_PROMPT_CHARS,
} from "../../src/domain";
import { encodeJsonl } from "../../src/session/jsonl";
import { DurableSessionStore } from "../../src/session/session-store";
import { client, model, openSession, prompt, traceOf, uploadWorkspace } from "../awtl/harness";
import { readSse } from "../helpers/sse-client";
import { tarOf } from "../workspace/archives";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const T = "2026-11-30T03:00:00.000Z";
const base = { sessionId: "s_rec", createdAt: T };

/** A recorded conversation: a prompt, a read of a.txt, a tool result, an answer. */
const recording: AgentMessage[] = [
  { ...base, kind: "user", id: "m_1", parentId: null, text: "what is in a.txt?" },
  {
    ...base,
    kind: "assistant",
    id: "m_2",
    parentId: "m_1",
    text: "Reading it.",
    stopReason: "TOOL_CALLS",
    toolCalls: [{ id: "call_1", name: "read", arguments: { path: "a.txt" } }],
    usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
  },
  {
    ...base,
    kind: "tool_result",
    id: "m_3",
    parentId: "m_2",
    toolCallId: "call_1",
    toolName: "read",
    resultText: "1\thello",
    error: false,
  },
  { ...base, kind: "assistant", id: "m_4", parentId: "m_3", text: "It says hello.", stopReason: "STOP" },
];

const importJsonl = (body: string, query = "", type = "application/x-ndjson") =>
  api(`/api/sessions/import${query}`, { method: "POST", body, headers: { "content-type": type } });
const errorOf = async (res: Response) => [res.status, ((await res.json()) as { error: { code: string; message: string } }).error];

describe("readConversation", () => {
  it("reads an exported conversation", () => {
    expect(readConversation(encodeJsonl(recording))).toEqual(recording);
  });

  it("refuses anything that is not one parent chain of one session, naming the line", () => {
    const refusal = (messages: unknown[]) => {
      try {
        readConversation(messages.map((m) => JSON.stringify(m)).join("\n"));
        return "accepted";
      } catch (err) {
        return `${(err as { code: string }).code}: ${(err as Error).message}`;
      }
    };
    const [m1, m2, m3, m4] = recording;
    expect(refusal([])).toMatch(/^import_invalid: /);
    expect(refusal([m1, { ...m2, parentId: null }])).toMatch(/^import_invalid: line 2: parentId must be 'm_1'/);
    expect(refusal([m1, { ...m2, sessionId: "s_other" }])).toMatch(/^import_invalid: line 2: belongs to session 's_other'/);
    expect(refusal([m1, m2, m3, { ...m3, id: "m_5", parentId: "m_3" }])).toMatch(/^import_invalid: line 4: tool result for 'call_1'/);
    expect(refusal([m1, { ...m2, id: "m_1" }])).toMatch(/^import_invalid: line 2: message id 'm_1' appears twice/);
    expect(refusal([m1, { ...m4, extra: 1 }])).toMatch(/^import_invalid: line 2: /);
    expect(refusal([{ ...m1, text: "\ud800" }])).toMatch(/^invalid_text: line 1: text/);
    const deep = (levels: number): unknown => (levels === 0 ? 1 : { a: deep(levels - 1) });
    const nested = (levels: number) => ({ ...m2, toolCalls: [{ id: "call_1", name: "read", arguments: { path: deep(levels) } }] });
    expect(refusal([m1, nested(MAX_JSON_DEPTH)])).toBe(
      `import_invalid: line 2: arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`,
    );
    expect(refusal([m1, nested(MAX_JSON_DEPTH - 4)])).toBe("accepted");
    // Arguments as deep as a model's call may be (64 levels): the export of such a session imports (hunt 81).
    expect(refusal([m1, nested(MAX_JSON_DEPTH - 1)])).toBe("accepted");
    const call = { id: "call_1", name: "read", arguments: { path: "a.txt" } };
    expect(refusal([m1, { ...m2, toolCalls: [call, call] }])).toBe(
      "import_invalid: line 2: tool call id 'call_1' is already waiting for its result",
    );
    // Once answered, the id may come again (as some providers reuse them); requests send it renamed (toOpenAIMessages).
    expect(refusal([m1, m2, m3, { ...m2, id: "m_4", parentId: "m_3" }])).toBe("accepted");
    const longId = "m_".padEnd(MAX_IMPORTED_ID_CHARS + 1, "x");
    expect(refusal([{ ...m1, id: longId }])).toBe(
      `import_invalid: line 1: an id of ${MAX_IMPORTED_ID_CHARS + 1} characters (at most ${MAX_IMPORTED_ID_CHARS})`,
    );
    expect(refusal([{ ...m1, id: "m_".padEnd(MAX_IMPORTED_ID_CHARS, "x") }])).toBe("accepted");
    expect(refusal([m1, { ...m2, cost: 1e308 }])).toBe(`import_invalid: line 2: cost is 1e+308 (at most ${MAX_IMPORTED_COST})`);
    expect(refusal([m1, { ...m2, usage: { inputTokens: 10, outputTokens: MAX_IMPORTED_TOKENS + 1, totalTokens: 15 } }])).toBe(
      `import_invalid: line 2: usage.outputTokens is ${MAX_IMPORTED_TOKENS + 1} (at most ${MAX_IMPORTED_TOKENS})`,
    );
    // A result after another message: a provider is sent the call as unanswered and never this result.
    const late = { ...m1, id: "m_u2", parentId: "m_2", text: "meanwhile" };
    expect(refusal([m1, m2, late, { ...m3, parentId: "m_u2" }])).toBe(
      "import_invalid: line 4: tool result for 'call_1', which is not waiting for its result: no earlier message called it, it was answered, or another message came after its call",
    );
    expect(refusal([m1, m2, late])).toBe("accepted");
    // User text as a prompt takes it.
    expect(refusal([{ ...m1, text: " \n " }])).toBe("import_invalid: line 1: a user message's text is blank (a prompt's text is not)");
    expect(refusal([{ ...m1, text: "" }])).toBe("import_invalid: line 1: a user message's text is blank (a prompt's text is not)");
    expect(refusal([{ ...m1, text: "x".repeat(MAX_PROMPT_CHARS + 1) }])).toBe(
      `import_invalid: line 1: a user message's text has ${MAX_PROMPT_CHARS + 1} characters (a prompt's at most ${MAX_PROMPT_CHARS})`,
    );
    expect(refusal([{ ...m1, text: "x".repeat(MAX_PROMPT_CHARS) }])).toBe("accepted");
    // Counted as a prompt's: in code points, so a prompt of 100,000 emoji (200,000 UTF-16 units) comes back (hunt 57).
    expect(refusal([{ ...m1, text: "😀".repeat(MAX_PROMPT_CHARS) }])).toBe("accepted");
    expect(refusal([{ ...m1, text: "😀".repeat(MAX_PROMPT_CHARS + 1) }])).toBe(
      `import_invalid: line 1: a user message's text has ${MAX_PROMPT_CHARS + 1} characters (a prompt's at most ${MAX_PROMPT_CHARS})`,
    );
  });
});

describe("readConversationBody", () => {
  /** A stream of `bytes` cut at the given offsets. */
  const cut = (bytes: Uint8Array, at: number[]) =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        let from = 0;
        for (const to of [...at, bytes.byteLength]) {
          controller.enqueue(bytes.slice(from, to));
          from = to;
        }
        controller.close();
      },
    });
  const hex = async (bytes: Uint8Array) =>
    [...new Uint8Array(await crypto.subtle.digest("SHA-256", bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");
  const failure = async (promise: Promise<unknown>) => {
    try {
      await promise;
      return "resolved";
    } catch (error) {
      return error instanceof HarnessError ? `${error.code}: ${error.message}` : String(error);
    }
  };

  it("reads lines and multi-byte characters cut anywhere between chunks, as readConversation reads the whole text", async () => {
    const withText = recording.map((m) => (m.kind === "user" ? { ...m, text: `où est le 😀 ${"x".repeat(3000)}?` } : m));
    const text = `\ufeff${encodeJsonl(withText)}`;
    const bytes = new TextEncoder().encode(text);
    // Every cut: a one-byte chunk per byte around the emoji and each newline, and one long line in 97-byte pieces.
    const cuts = [...Array(bytes.byteLength - 1).keys()]
      .map((i) => i + 1)
      .filter((i) => i % 97 === 0 || bytes[i]! >= 0x80 || bytes[i] === 0x0a);
    const read = await readConversationBody(cut(bytes, cuts), MAX_IMPORT_BYTES);
    expect(read.messages).toEqual(withText);
    expect(read.messages).toEqual(readConversation(text.slice(1)));
    expect(read.sha256).toBe(await hex(bytes));
    // Without a final newline, the last line still counts.
    const unterminated = new TextEncoder().encode(encodeJsonl(recording).trimEnd());
    expect((await readConversationBody(cut(unterminated, [5, 300]), MAX_IMPORT_BYTES)).messages).toEqual(recording);
  });

  it("refuses what readConversation refuses, a body past the limit, bytes that are not UTF-8 and no body", async () => {
    const bytes = new TextEncoder().encode(encodeJsonl(recording));
    expect(await failure(readConversationBody(cut(bytes, [10]), bytes.byteLength - 1))).toBe(
      `body_too_large: request body is larger than ${bytes.byteLength - 1} bytes`,
    );
    const broken = new Uint8Array([...bytes.slice(0, 20), 0xff, ...bytes.slice(20)]);
    expect(await failure(readConversationBody(cut(broken, [20, 21]), MAX_IMPORT_BYTES))).toBe(
      "import_invalid: the body is not valid UTF-8",
    );
    // A multi-byte character cut short by the end of the body.
    const truncated = new TextEncoder().encode(`${encodeJsonl(recording)}é`).slice(0, -1);
    expect(await failure(readConversationBody(cut(truncated, []), MAX_IMPORT_BYTES))).toBe("import_invalid: the body is not valid UTF-8");
    expect(await failure(readConversationBody(null, MAX_IMPORT_BYTES))).toBe("import_invalid: the conversation holds no messages");
    // Blank lines are passed over; a refusal still names the line by its place in the body.
    const gap = new TextEncoder().encode(`\n${encodeJsonl(recording.slice(0, 2))}\r\n \n${encodeJsonl(recording.slice(2))}\n\n`);
    expect((await readConversationBody(cut(gap, [7]), MAX_IMPORT_BYTES)).messages).toEqual(recording);
    const gapThenBroken = new TextEncoder().encode(`${encodeJsonl(recording.slice(0, 1))}\n\n{"kind":`);
    expect(await failure(readConversationBody(cut(gapThenBroken, [7]), MAX_IMPORT_BYTES))).toBe(
      "import_invalid: line 4: malformed JSON (Unexpected end of JSON input)",
    );
  });
});

describe("POST /api/sessions/import", () => {
  it("creates a session holding the conversation, which a prompt can replay with replay:<id>", async () => {
    const upload = await api("/api/workspaces", {
      method: "POST",
      body: await tarOf({ "a.txt": "hello\n" }),
      headers: { "content-type": "application/x-tar" },
    });
    const { workspaceId } = (await upload.json()) as { workspaceId: string };
    const imported = await importJsonl(encodeJsonl(recording), `?title=${encodeURIComponent("a recording")}`);
    expect(imported.status).toBe(201);
    const created = (await imported.json()) as { sessionId: string; messages: number; workspaceId: string | null };
    expect(created).toMatchObject({ messages: 4, workspaceId: null, projectId: null });
    const info = (await (await api(`/api/sessions/${created.sessionId}`)).json()) as { title: string; counts: { messages: number } };
    expect(info).toMatchObject({ title: "a recording", counts: { messages: 4, events: 0 } });
    // The session list shows the same counts before any run (it showed 0 until the first run reported).
    const listed = (await (await api("/api/sessions")).json()) as { items: { id: string; counts: unknown }[] };
    const entry = listed.items.find((x) => x.id === created.sessionId)!;
    expect(entry.counts).toEqual({ messages: 4, events: 0 });
    // Stored as sent, under the new session's id.
    const stored = (await (await api(`/api/sessions/${created.sessionId}/messages`)).text()).trimEnd().split("\n");
    expect(stored.map((line) => JSON.parse(line))).toEqual(recording.map((m) => ({ ...m, sessionId: created.sessionId })));

    // Replayed in a session on a workspace: the recorded tool call runs against the current files.
    const opened = await api("/api/sessions", {
      method: "POST",
      body: JSON.stringify({ workspaceId }),
      headers: { "content-type": "application/json" },
    });
    const { sessionId } = (await opened.json()) as { sessionId: string };
    const run = await api(`/api/sessions/${sessionId}/messages/stream`, {
      method: "POST",
      body: JSON.stringify({ text: "what is in a.txt?", model: `replay:${created.sessionId}` }),
      headers: { "content-type": "application/json" },
    });
    const { frames } = await readSse(run);
    expect(frames.map((f) => f.data.type)).toEqual([
      "agent_started",
      "user_message_appended",
      "assistant_delta",
      "assistant_completed",
      "tool_call_started",
      "tool_call_finished",
      "assistant_delta",
      "assistant_completed",
      "agent_completed",
    ]);
    expect(frames[5]!.data).toMatchObject({ tool: "read", error: false, summary: expect.stringContaining("hello") });

    // The run's own messages (kind first, then the envelope) survive an export and an import byte for byte.
    const exported = await (await api(`/api/sessions/${sessionId}/messages`)).text();
    expect(
      exported
        .split("\n")
        .filter(Boolean)
        .map((line) => Object.keys(JSON.parse(line)).slice(0, 5)),
    ).toEqual(Array(4).fill(["kind", "id", "sessionId", "parentId", "createdAt"]));
    const again = (await (await importJsonl(exported)).json()) as { sessionId: string };
    const reexported = await (await api(`/api/sessions/${again.sessionId}/messages`)).text();
    expect(reexported).toBe(exported.replaceAll(`"sessionId":"${sessionId}"`, `"sessionId":"${again.sessionId}"`));
  });

  it("stores the lines as sent: their field order, and a __proto__ key in tool-call arguments", async () => {
    const lines = [
      '{"id":"m_1","kind":"user","sessionId":"s_rec","parentId":null,"createdAt":"2026-11-30T03:00:00.000Z","text":"go"}',
      '{"kind":"assistant","id":"m_2","sessionId":"s_rec","parentId":"m_1","createdAt":"2026-11-30T03:00:00.000Z","text":"","stopReason":"TOOL_CALLS","toolCalls":[{"id":"c_1","name":"read","arguments":{"path":"a.txt","__proto__":{"x":1}}}]}',
    ];
    const imported = await importJsonl(`${lines.join("\n")}\n`);
    expect(imported.status).toBe(201);
    const { sessionId } = (await imported.json()) as { sessionId: string };
    const exported = await (await api(`/api/sessions/${sessionId}/messages`)).text();
    expect(exported).toBe(`${lines.join("\n").replaceAll('"sessionId":"s_rec"', `"sessionId":"${sessionId}"`)}\n`);
  });

  it("replays a recording larger than one RPC answer carries (32 MiB)", async () => {
    // Imports stop at 16 MiB: the first 150 turns are imported, 200 more appended (prompts of 99,000 characters).
    const prompt = (n: number) => `${n} ${"x".repeat(99_000)}`;
    const turn = (n: number): AgentMessage[] => [
      { ...base, kind: "user", id: `m_u${n}`, parentId: n === 1 ? null : `m_a${n - 1}`, text: prompt(n) },
      { ...base, kind: "assistant", id: `m_a${n}`, parentId: `m_u${n}`, text: `answer ${n}`, stopReason: "STOP" },
    ];
    const turns = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => turn(from + i)).flat();
    const imported = await importJsonl(encodeJsonl(turns(1, 150)));
    expect(imported.status).toBe(201);
    const { sessionId: recorded } = (await imported.json()) as { sessionId: string };
    const store = new DurableSessionStore(env);
    for (const m of turns(151, 350)) await store.appendMessage(recorded, { ...m, sessionId: recorded });
    const exported = await (await api(`/api/sessions/${recorded}/messages`)).text();
    expect(exported.length).toBeGreaterThan(33 * 1024 * 1024);

    const { sessionId } = (await (
      await api("/api/sessions", { method: "POST", body: "{}", headers: { "content-type": "application/json" } })
    ).json()) as {
      sessionId: string;
    };
    const answers: string[] = [];
    for (let i = 0; i < 2; i++) {
      const run = await api(`/api/sessions/${sessionId}/messages/stream`, {
        method: "POST",
        body: JSON.stringify({ text: "again", model: `replay:${recorded}` }),
        headers: { "content-type": "application/json" },
      });
      const { frames } = await readSse(run);
      expect(frames.at(-1)!.data.type).toBe("agent_completed");
      answers.push(
        frames
          .filter((f) => f.data.type === "assistant_delta")
          .map((f) => f.data.text)
          .join(""),
      );
    }
    expect(answers).toEqual(["answer 1", "answer 2"]);
  });

  it("a message with an id as long as an import allows can be a fork point", async () => {
    const longId = "m_".padEnd(MAX_IMPORTED_ID_CHARS, "x");
    const [m1] = recording;
    const imported = await importJsonl(encodeJsonl([{ ...m1!, id: longId }]));
    const { sessionId } = (await imported.json()) as { sessionId: string };
    const forked = await api(`/api/sessions/${sessionId}/fork`, {
      method: "POST",
      body: JSON.stringify({ atMessageId: longId }),
      headers: { "content-type": "application/json" },
    });
    expect([forked.status, ((await forked.json()) as { forkedFrom: unknown }).forkedFrom]).toEqual([201, { sessionId, messageId: longId }]);
  });

  it("with an Idempotency-Key: a repeat, also concurrent, is the same session filled once; another body under the key is 422", async () => {
    const body = encodeJsonl(recording);
    const keyed = (text: string, key: string) =>
      api("/api/sessions/import", {
        method: "POST",
        body: text,
        headers: { "content-type": "application/x-ndjson", "idempotency-key": key },
      });
    const answers = await Promise.all([1, 2, 3, 4].map(() => keyed(body, "import-once")));
    const created = (await Promise.all(answers.map((r) => r.json()))) as { sessionId: string; messages: number }[];
    expect(answers.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(created.map((c) => c.sessionId)).size).toBe(1);
    const again = (await (await keyed(body, "import-once")).json()) as { sessionId: string };
    expect(again.sessionId).toBe(created[0]!.sessionId);
    const stored = (await (await api(`/api/sessions/${again.sessionId}/messages`)).text()).trimEnd().split("\n");
    expect(stored.map((l) => (JSON.parse(l) as { id: string }).id)).toEqual(["m_1", "m_2", "m_3", "m_4"]);
    const other = await keyed(encodeJsonl(recording.slice(0, 1)), "import-once");
    expect([other.status, ((await other.json()) as { error: { code: string } }).error.code]).toEqual([422, "idempotency_key_reused"]);
    const bad = await keyed(body, "bad key");
    expect([bad.status, ((await bad.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_idempotency_key"]);
    // Refused before the body is read (and a slot taken): a body that is not even a conversation gets the same answer.
    const early = await keyed("not a conversation", "bad key");
    expect([early.status, ((await early.json()) as { error: { code: string } }).error.code]).toEqual([400, "invalid_idempotency_key"]);
  });

  it("refuses another media type, a bad query, a broken conversation and invalid UTF-8", async () => {
    expect(await errorOf(await importJsonl(encodeJsonl(recording), "", "application/json"))).toEqual([
      415,
      expect.objectContaining({ code: "unsupported_media_type" }),
    ]);
    expect(await errorOf(await importJsonl(encodeJsonl(recording), "?colour=red"))).toEqual([
      400,
      expect.objectContaining({ code: "invalid_query" }),
    ]);
    expect(await errorOf(await importJsonl(encodeJsonl(recording), "?workspaceId=w_unknown"))).toEqual([
      404,
      expect.objectContaining({ code: "workspace_not_found" }),
    ]);
    expect(await errorOf(await importJsonl(encodeJsonl(recording.slice(1))))).toEqual([
      400,
      expect.objectContaining({ code: "import_invalid", message: expect.stringMatching(/^line 1: parentId must be null/) }),
    ]);
    const bad = await api("/api/sessions/import", {
      method: "POST",
      body: new Uint8Array([0x7b, 0xff, 0x7d]),
      headers: { "content-type": "application/x-ndjson" },
    });
    expect(await errorOf(bad)).toEqual([400, expect.objectContaining({ code: "import_invalid" })]);
  });
});

describe("what a model sends, exported and imported again", () => {
  it("lone surrogates from the provider are stored as U+FFFD (a pair split across deltas stays whole), so the export imports", async () => {
    const harness = client();
    const workspaceId = await uploadWorkspace(harness, { "src/a.ts": "x\n", [`src/${"a".repeat(194)}😀😀😀.ts`]: "y\n" });
    const { sessionId } = await openSession(harness, {
      workspaceId,
      answers: [
        model.tools({ id: "c1", name: "read", args: { path: "src/\ud800.ts", "k\udc00": 1 } }),
        model.tools({ id: "c2", name: "find", args: { pattern: `${"a".repeat(194)}*` } }),
        model.deltas("pair:\ud83d", "\ude00 lone:\ud800 end"),
      ],
    });
    await prompt(harness, sessionId, { text: "go" });
    const exported = await (await api(`/api/sessions/${sessionId}/messages`)).text();
    const messages = exported
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as AgentMessage & { seq: number });
    const assistants = messages.filter((m) => m.kind === "assistant");
    expect(assistants.map((m) => [m.text, m.toolCalls?.map((c) => c.arguments) ?? null])).toEqual([
      ["", [{ path: "src/\ufffd.ts", "k\ufffd": 1 }]],
      ["", [{ pattern: `${"a".repeat(194)}*` }]],
      ["pair:😀 lone:\ufffd end", null],
    ]);
    // The call ran as it is recorded, its key with U+FFFD (hunt 109).
    const read = messages.find((m) => m.kind === "tool_result" && m.toolCallId === "c1");
    expect(read?.kind === "tool_result" && read.resultText).toBe(
      'invalid_arguments: invalid arguments for read: Unrecognized key: "k\ufffd"',
    );
    const again = await importJsonl(exported);
    expect(again.status).toBe(201);
    // The trace's summaries count what a tool found (never its text, here a path whose 200th character is inside an emoji).
    const summaries = (await traceOf(harness, sessionId)).flatMap((r) => (r.type === "observation" ? [r.summary] : []));
    expect(summaries[3]).toBe("find: 1 line, 213 bytes");
    expect(summaries.filter((text) => /\p{Cs}/u.test(text))).toEqual([]);
  });
});
