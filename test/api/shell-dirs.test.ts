import { env, exports } from "cloudflare:workers";
import { expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { DurableSessionStore } from "../../src/session/session-store";
import { readSse } from "../helpers/sse-client";
import { useSessionDeps } from "../helpers/test-worker";
import { bashTurns, sseResponse } from "../model/helpers";
import { entry, tarOf } from "../workspace/archives";

const api = (path: string, init?: RequestInit) => exports.default.fetch(new Request(`http://localhost${path}`, init));
const post = (path: string, body: unknown) =>
  api(path, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

it("the shell removes directories that came empty in the upload (rmdir, rm -r), and they stay removed", async () => {
  const tar = await tarOf({ "keep/x.txt": "x\n" }, [
    entry("empty", "directory"),
    entry("vacant", "directory"),
    entry("vacant/inner", "directory"),
  ]);
  const upload = await api("/api/workspaces", { method: "POST", body: tar, headers: { "content-type": "application/x-tar" } });
  const { workspaceId } = (await upload.json()) as { workspaceId: string };
  const { sessionId } = (await (await post("/api/sessions", { workspaceId })).json()) as { sessionId: string };
  const commands = ["rmdir empty && rm -r vacant && ls", "ls; ls empty vacant 2>&1; echo rc=$?"];
  const answers = bashTurns(commands);
  let turn = 0;
  useSessionDeps(sessionId, { ids: counterIds(), modelFetch: async () => sseResponse(answers[turn++]!) });
  await readSse(await post(`/api/sessions/${sessionId}/messages/stream`, { text: "tidy", allowBash: true, allowWrite: true }));
  const results = (await new DurableSessionStore(env).loadMessages(sessionId)).filter((m) => m.kind === "tool_result");
  expect(results.map((m) => m.kind === "tool_result" && [m.error, m.resultText])).toEqual([
    [false, "keep"],
    [false, "keep\nls: cannot access 'empty': No such file or directory\nls: cannot access 'vacant': No such file or directory\nrc=2"],
  ]);
  // git keeps no directories: the diff is empty.
  expect(await (await api(`/api/sessions/${sessionId}/changes`)).text()).toBe("");
});
