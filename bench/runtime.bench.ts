import { env, exports } from "cloudflare:workers";
import OpenAI from "openai";
import { it } from "vitest";
import { DurableSessionStore } from "../src/session/session-store";
import { useSessionDeps } from "../test/helpers/test-worker";

/**
 * Harness overhead: one prompt through the whole path (Worker route -> SessionDO -> runtime ->
 * model client -> durable appends -> SSE) against an instant local model, next to reading the very
 * same SSE body directly with the openai SDK. Same body, same run.
 */
const DELTAS = 2_000;
const RUNS = 5;
const encoder = new TextEncoder();

function modelBody(): string {
  let body = "";
  for (let i = 0; i < DELTAS; i++)
    body += `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: `tok${i} ` }, finish_reason: null }] })}\n\n`;
  body += `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;
  return `${body}data: [DONE]\n\n`;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function direct(body: string) {
  const client = new OpenAI({
    apiKey: "k",
    baseURL: "https://llm.example.test/v1",
    maxRetries: 0,
    fetch: async () => new Response(encoder.encode(body), { headers: { "content-type": "text/event-stream" } }),
  });
  const start = performance.now();
  const stream = await client.chat.completions.create({ model: "m", messages: [{ role: "user", content: "hi" }], stream: true });
  let first = 0;
  let text = "";
  for await (const chunk of stream) {
    if (!first) first = performance.now() - start;
    text += chunk.choices[0]?.delta?.content ?? "";
  }
  return { first, total: performance.now() - start, chars: text.length };
}

async function harness(body: string) {
  const store = new DurableSessionStore(env);
  const { id } = await store.create({});
  useSessionDeps(id, { modelFetch: async () => new Response(encoder.encode(body), { headers: { "content-type": "text/event-stream" } }) });
  const start = performance.now();
  const res = await exports.default.fetch(
    new Request(`http://localhost/api/sessions/${id}/messages/stream`, {
      method: "POST",
      body: JSON.stringify({ text: "hi" }),
      headers: { "content-type": "application/json" },
    }),
  );
  const reader = res.body!.getReader();
  let first = 0;
  let frames = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!first) first = performance.now() - start;
    frames += new TextDecoder().decode(value).split("\n\n").length - 1;
  }
  const total = performance.now() - start;
  const messages = await store.loadMessages(id);
  const answer = messages[1]!.kind === "assistant" ? messages[1]!.text : "";
  return { first, total, frames, chars: answer.length };
}

it("harness overhead per streamed delta and time to first SSE byte", async () => {
  const body = modelBody();
  const d: Awaited<ReturnType<typeof direct>>[] = [];
  const h: Awaited<ReturnType<typeof harness>>[] = [];
  await direct(body);
  await harness(body); // warm up both paths (module loading, first DO)
  for (let i = 0; i < RUNS; i++) {
    d.push(await direct(body));
    h.push(await harness(body));
  }
  if (h[0]!.chars !== d[0]!.chars) throw new Error(`answer lengths differ: ${h[0]!.chars} vs ${d[0]!.chars}`);
  const directTotal = median(d.map((x) => x.total));
  const harnessTotal = median(h.map((x) => x.total));
  const rows = [
    [
      "openai SDK reading the body directly",
      `${median(d.map((x) => x.first)).toFixed(2)} ms`,
      `${directTotal.toFixed(1)} ms`,
      `${((directTotal / DELTAS) * 1000).toFixed(1)} us`,
      "-",
    ],
    [
      `harness: route -> DO -> runtime -> log -> SSE (${h[0]!.frames} SSE frames)`,
      `${median(h.map((x) => x.first)).toFixed(2)} ms`,
      `${harnessTotal.toFixed(1)} ms`,
      `${((harnessTotal / DELTAS) * 1000).toFixed(1)} us`,
      `${(harnessTotal / directTotal).toFixed(1)}x`,
    ],
  ];
  console.log(
    `\nruntime, ${DELTAS} deltas of ~8 chars, median of ${RUNS}\n| path | first byte | total | per delta | vs SDK |\n| --- | --- | --- | --- | --- |\n` +
      rows.map((r) => `| ${r.join(" | ")} |`).join("\n") +
      `\nharness overhead per delta: ${(((harnessTotal - directTotal) / DELTAS) * 1000).toFixed(1)} us`,
  );
});
