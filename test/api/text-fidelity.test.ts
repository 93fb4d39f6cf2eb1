import { env, exports } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { jsonTextProblem } from "../../src/api/body";
import { counterIds, MAX_JSON_DEPTH } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { chunk, sse, sseResponse } from "../model/helpers";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (path: string, body: string) => api(path, { method: "POST", body, headers: { "content-type": "application/json" } });
const store = new DurableSessionStore(env);

// NUL, other control characters, a surrogate pair, a BOM and a line separator.
const TRICKY = "a\u0000b\u0001c\u001f😀\ufeff\u2028end";

describe("text fidelity", () => {
  it("NUL and control characters round-trip byte for byte through the title, the log, exports and the stream", async () => {
    const created = await post("/api/sessions", JSON.stringify({ title: TRICKY }));
    const { sessionId } = (await created.json()) as { sessionId: string };
    useSessionDeps(sessionId, {
      ids: counterIds(),
      modelFetch: async () => sseResponse(sse([chunk({ content: `echo ${TRICKY}` }), chunk({}, "stop")])),
    });
    expect(((await (await api(`/api/sessions/${sessionId}`)).json()) as { title: string }).title).toBe(TRICKY);

    const run = await readSse(await post(`/api/sessions/${sessionId}/messages/stream`, JSON.stringify({ text: TRICKY })));
    const streamed = run.frames
      .filter((f) => f.data.type === "assistant_delta")
      .map((f) => f.data.text)
      .join("");
    expect(streamed).toBe(`echo ${TRICKY}`);

    const check = async () => {
      const lines = (await (await api(`/api/sessions/${sessionId}/messages`)).text())
        .trimEnd()
        .split("\n")
        .map((l) => JSON.parse(l));
      expect(lines.map((m) => m.text)).toEqual([TRICKY, `echo ${TRICKY}`]);
    };
    await check(); // from SQLite
    await store.stub(sessionId).flush();
    await check(); // from the R2 segment
    const mirrored = (await (await env.STORE.get(`sessions/${sessionId}/session.json`))!.json()) as { title: string };
    expect(mirrored.title).toBe(TRICKY);
  });

  it("a body nested deeper than MAX_JSON_DEPTH is refused with 400 invalid_body, however deep (no stack overflow)", async () => {
    for (const depth of [MAX_JSON_DEPTH, 8_000, 100_000]) {
      const res = await post("/api/sessions", `{"title":${"[".repeat(depth)}${"]".repeat(depth)}}`);
      expect([res.status, ((await res.json()) as { error: { code: string; message: string } }).error]).toEqual([
        400,
        {
          code: "invalid_body",
          message: `invalid request body: arrays and objects nest deeper than ${MAX_JSON_DEPTH} levels`,
          requestId: res.headers.get("x-request-id"),
        },
      ]);
    }
    // One level less reaches the schema, which says what is wrong with the title.
    const shallow = await post("/api/sessions", `{"title":${"[".repeat(MAX_JSON_DEPTH - 1)}${"]".repeat(MAX_JSON_DEPTH - 1)}}`);
    expect([shallow.status, ((await shallow.json()) as { error: { message: string } }).error.message]).toEqual([
      400,
      "invalid request body: title: Invalid input: expected string, received array",
    ]);
  });

  it("jsonTextProblem finds the first lone surrogate in document order, keys before their values, and nesting past the limit", () => {
    const nest = (levels: number): unknown => (levels === 0 ? "x" : [nest(levels - 1)]);
    expect(jsonTextProblem({ a: { b: ["ok", "\ud800"] }, "\udc00": 1 })).toEqual({ kind: "lone_surrogate", path: "a.b.1" });
    expect(jsonTextProblem({ a: 1, "k\udc00": { deep: "\ud800" } })).toEqual({ kind: "lone_surrogate", path: "k\udc00" });
    expect(jsonTextProblem("\ud800")).toEqual({ kind: "lone_surrogate", path: "(the body)" });
    expect(jsonTextProblem({ v: nest(MAX_JSON_DEPTH - 1) })).toBeNull();
    expect(jsonTextProblem({ v: nest(MAX_JSON_DEPTH) })).toEqual({ kind: "too_deep" });
  });

  it("a lone surrogate is refused with 400 invalid_text, naming the field; nothing is stored", async () => {
    const res = await post("/api/sessions", '{"title":"ok\\ud83d"}');
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: {
        code: "invalid_text",
        message: "title: contains a lone UTF-16 surrogate (an unpaired \\ud800-\\udfff escape); send well-formed Unicode",
        requestId: res.headers.get("x-request-id"),
      },
    });
    const { sessionId } = (await (await post("/api/sessions", "{}")).json()) as { sessionId: string };
    const prompt = await post(`/api/sessions/${sessionId}/messages/stream`, '{"text":"\\udc00 lone low half"}');
    expect(prompt.status).toBe(400);
    expect(((await prompt.json()) as { error: { message: string } }).error.message).toMatch(/^text: contains a lone UTF-16 surrogate/);
    expect((await store.info(sessionId))!.counts).toEqual({ messages: 0, events: 0, trace: 0 });
  });
});
