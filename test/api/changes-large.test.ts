import { exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { MAX_MODEL_OUTPUT_CHARS } from "../../src/domain/limits";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { bashTurns, chunk, sse, sseResponse } from "../model/helpers";
import { tarOf } from "../workspace/archives";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));

const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

/** Forks a session at its newest message: the fork's id. */
async function forkOf(sessionId: string): Promise<string> {
  const forked = await post(`/api/sessions/${sessionId}/fork`, {});
  expect(forked.status).toBe(201);
  return ((await forked.json()) as { sessionId: string }).sessionId;
}

/** `lines` lines of 999 characters and a newline: line i is its number padded with `c`. */
function bigText(c: string, lines: number): string {
  const out: string[] = [];
  for (let i = 0; i < lines; i++) out.push(String(i).padEnd(999, c));
  return `${out.join("\n")}\n`;
}

const lines = 12_000;
const files = { "a.txt": bigText("a", lines), "b.txt": bigText("b", lines), "c.txt": bigText("c", lines), "keep.md": "kept\n" };

/** A session over `files` whose agent ran each command with bash, one tool call after the other. */
async function sessionThatRan(commands: string[]): Promise<string> {
  const tar = await tarOf(files);
  const upload = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
  expect(upload.status).toBe(201);
  const { workspaceId } = (await upload.json()) as { workspaceId: string };
  const created = await post("/api/sessions", { workspaceId });
  const { sessionId } = (await created.json()) as { sessionId: string };
  const answers = bashTurns(commands);
  let turn = 0;
  useSessionDeps(sessionId, { ids: counterIds(), modelFetch: async () => sseResponse(answers[turn++]!) });
  const prompt = { text: "run them", allowBash: true, allowWrite: true };
  const { frames } = await readSse(await post(`/api/sessions/${sessionId}/messages/stream`, prompt));
  expect(frames.filter((f) => f.data.type === "tool_call_finished").map((f) => f.data.error)).toEqual(commands.map(() => false));
  return sessionId;
}

it("/changes streams a diff larger than one RPC answer (three deleted 12 MB files)", async () => {
  const sessionId = await sessionThatRan(["rm a.txt b.txt c.txt"]);

  const response = await api(`/api/sessions/${sessionId}/changes`);
  expect(response.status).toBe(200);
  const diff = await response.text();
  const expected = (["a", "b", "c"] as const)
    .map((name) => {
      const removed = files[`${name}.txt`]
        .slice(0, -1)
        .split("\n")
        .map((line) => `-${line}`);
      return [
        `diff --git a/${name}.txt b/${name}.txt`,
        "deleted file mode 100644",
        `--- a/${name}.txt`,
        "+++ /dev/null",
        `@@ -1,${lines} +0,0 @@`,
        ...removed,
        "",
      ].join("\n");
    })
    .join("");
  expect(diff.length).toBe(expected.length);
  expect(diff.length).toBeGreaterThan(36_000_000);
  expect(diff === expected).toBe(true);
}, 60_000);

it("a fork copies more written bytes than one RPC call carries (36 MB of copies)", async () => {
  const sessionId = await sessionThatRan(["cp a.txt a2.txt && cp b.txt b2.txt", "cp c.txt c2.txt && rm a.txt"]);
  const forkId = await forkOf(sessionId);
  for (const name of ["a2.txt", "b2.txt", "c2.txt"]) {
    // Streamed a stored row at a time (hunt 84), with the file's length.
    const copy = await api(`/api/sessions/${forkId}/files/${name}`);
    const original = files[name.replace("2", "") as keyof typeof files];
    expect([copy.status, copy.headers.get("content-length"), (await copy.text()) === original]).toEqual([
      200,
      String(original.length),
      true,
    ]);
  }
  expect((await api(`/api/sessions/${forkId}/files/a.txt`)).status).toBe(404);
  const source = await (await api(`/api/sessions/${sessionId}/changes`)).text();
  const fork = await (await api(`/api/sessions/${forkId}/changes`)).text();
  expect(fork.length).toBeGreaterThan(36_000_000);
  expect(fork === source).toBe(true);
}, 60_000);

it("a fork copies more messages than one RPC call carries (9 answers of 4 MB)", async () => {
  const created = await post("/api/sessions", {});
  const { sessionId } = (await created.json()) as { sessionId: string };
  const answer = (i: number) => String(i).repeat(MAX_MODEL_OUTPUT_CHARS);
  const deltas = (i: number) =>
    Array.from({ length: 16 }, (_, k) => answer(i).slice((k * answer(i).length) / 16, ((k + 1) * answer(i).length) / 16));
  let turn = 0;
  useSessionDeps(sessionId, {
    ids: counterIds(),
    modelFetch: async () => {
      const i = turn++;
      return sseResponse(sse([...deltas(i).map((d) => chunk({ content: d })), chunk({}, "stop")]));
    },
  });
  for (let i = 0; i < 9; i++) {
    const res = await post(`/api/sessions/${sessionId}/messages/stream`, { text: `answer ${i}`, contextWindow: 10_000_000 });
    expect((await readSse(res)).frames.at(-1)?.data.type).toBe("agent_completed");
  }
  const forkId = await forkOf(sessionId);
  const exported = async (id: string) =>
    (await (await api(`/api/sessions/${id}/messages`)).text())
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { kind: string; text: string; sessionId: string });
  const [source, fork] = [await exported(sessionId), await exported(forkId)];
  expect(fork.map((m) => [m.kind, m.text.length])).toEqual(source.map((m) => [m.kind, m.text.length]));
  expect(fork.filter((m) => m.kind === "assistant").map((m) => m.text === answer(Number(m.text[0])))).toEqual(Array(9).fill(true));
  expect(new Set(fork.map((m) => m.sessionId))).toEqual(new Set([forkId]));
}, 120_000);

it("/changes counts among the session's 4 downloads at once: a fifth, of changes or of a log, is 429 too_many_downloads", async () => {
  const sessionId = await sessionThatRan(["rm a.txt b.txt c.txt"]);
  // A 36 MB diff: more than the streams between the object and a client buffer, so one nobody reads stays open.
  const held = [];
  for (let i = 0; i < 4; i++) held.push(await api(`/api/sessions/${sessionId}/changes`));
  expect(held.map((res) => res.status)).toEqual([200, 200, 200, 200]);
  const refused = [await api(`/api/sessions/${sessionId}/changes`), await api(`/api/sessions/${sessionId}/messages`)];
  expect(
    await Promise.all(refused.map(async (res) => [res.status, ((await res.json()) as { error: { code: string } }).error.code])),
  ).toEqual([
    [429, "too_many_downloads"],
    [429, "too_many_downloads"],
  ]);
  expect((await held[0]!.text()).length).toBeGreaterThan(36_000_000);
  const next = await api(`/api/sessions/${sessionId}/messages`);
  expect(next.status).toBe(200);
  await next.text();
  for (const res of held.slice(1)) await res.body!.cancel();
});
