// The offline demo (`npm run demo`, against `npm run dev`): uploads the example workspace, imports a
// recorded conversation and replays it through the replay model (`replay:<sessionId>`), so the whole
// flow runs with no model and no API key: tool calls against the real tools, the answer streamed,
// the diff, the JSONL log, the viewer URL.
//
// examples/demo-recording.jsonl was written by hand as a conversation (prompt, four tool calls, an
// answer); its tool results were then filled in from a replay of it against examples/demo-workspace.
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { ApiError, HarnessApi } from "../client/api.mjs";
import { DEFAULT_URL, runUsage } from "../client/cli.mjs";
import { followRun } from "../client/event-stream.mjs";
import { packWorkspace } from "../client/pack.mjs";
import { paint, RunProgress } from "../client/progress.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const WORKSPACE = path.join(ROOT, "examples", "demo-workspace");
const RECORDING = path.join(ROOT, "examples", "demo-recording.jsonl");

const { values } = parseArgs({ options: { url: { type: "string" }, token: { type: "string" } } });
const api = new HarnessApi(values.url ?? process.env.PI_HARNESS_URL ?? DEFAULT_URL, values.token ?? process.env.PI_HARNESS_TOKEN);
const color = process.stdout.isTTY === true && process.env.NO_COLOR === undefined;
const p = paint(color);
const step = (text) => process.stdout.write(`\n${p.bold(p.cyan(`▸ ${text}`))}\n`);

try {
  process.exitCode = await demo();
} catch (err) {
  if (!(err instanceof ApiError)) throw err;
  process.stderr.write(`error: ${err.code}: ${err.message}\n`);
  if (err.code === "network_error") process.stderr.write(`Is the harness running? Start it with \`npm run dev\` in another terminal.\n`);
  process.exitCode = 1;
}

async function demo() {
  step(`1. Upload the example workspace (examples/demo-workspace) to ${api.baseUrl}`);
  const packed = await packWorkspace(WORKSPACE);
  const uploaded = await api.uploadWorkspace(packed.archive);
  console.log(`   POST /api/workspaces -> ${uploaded.workspaceId} (${uploaded.files} files, ${uploaded.bytes} bytes)`);

  step("2. Import the recorded conversation (examples/demo-recording.jsonl)");
  const recording = readFileSync(RECORDING, "utf8");
  const imported = await (
    await api.request("POST", "/api/sessions/import?title=demo%20recording", { body: recording, type: "application/x-ndjson" })
  ).json();
  console.log(`   POST /api/sessions/import -> ${imported.sessionId} (${imported.messages} messages)`);

  step("3. Open a session on the workspace and replay the recording against the real tools");
  const prompt = JSON.parse(recording.slice(0, recording.indexOf("\n"))).text;
  const { sessionId } = await api.createSession({ workspaceId: uploaded.workspaceId, title: "demo: make the port configurable" });
  console.log(`   POST /api/sessions -> ${sessionId}`);
  console.log(`   POST /api/sessions/${sessionId}/messages/stream  {"model":"replay:${imported.sessionId}","allowWrite":true}`);
  console.log(`\n${p.cyan(">")} ${prompt}\n`);
  const progress = new RunProgress({ stdout: process.stdout, stderr: process.stderr, color, spinner: process.stderr.isTTY === true });
  let terminal = null;
  let userMessageId = null;
  try {
    for await (const event of followRun(
      api,
      sessionId,
      { text: prompt, model: `replay:${imported.sessionId}`, allowWrite: true },
      {
        onReconnect: (info) => progress.reconnecting(info),
      },
    )) {
      progress.event(event);
      if (event.type === "user_message_appended") userMessageId = event.messageId;
      if (event.type === "agent_completed" || event.type === "agent_error") terminal = event;
    }
  } finally {
    progress.stop();
  }

  step("4. The changes, as a diff that git apply takes");
  process.stdout.write(await api.changes(sessionId));
  const usage = runUsage(await api.messages(sessionId), userMessageId);
  console.log(p.dim(`tokens (as recorded): ${usage.inputTokens} in · ${usage.outputTokens} out · ${usage.totalTokens} total`));

  step("5. The log: JSONL, flushed to R2 at the end of the run");
  const lines = (await (await api.request("GET", `/api/sessions/${sessionId}/events`)).text()).trim().split("\n");
  console.log(`   GET /api/sessions/${sessionId}/events -> ${lines.length} events, for example:`);
  for (const line of lines.slice(0, 3)) console.log(p.dim(`   ${line.length > 150 ? `${line.slice(0, 149)}…` : line}`));
  const firstSegment = `sessions/${sessionId}/events/${String(JSON.parse(lines[0] ?? "{}").seq ?? 1).padStart(12, "0")}.jsonl`;
  console.log(`   In R2 (local under .wrangler/state with npm run dev): sessions/${sessionId}/manifest.json, ${firstSegment}, ...`);
  console.log(p.dim(`   npx wrangler r2 object get pi-harness/${firstSegment} --local --pipe`));

  step("6. Watch it in the session viewer");
  console.log(`   ${api.baseUrl}/#/s/${sessionId}`);
  // The flags this demo was given, so the command reaches the same harness (a token is never printed).
  const reach = `${values.url === undefined ? "" : ` --url ${api.baseUrl}`}${values.token === undefined ? "" : " --token <token>"}`;
  console.log(`   or in a terminal: npm run agent -- show ${sessionId}${reach}`);
  return terminal?.type === "agent_completed" ? 0 : 1;
}
