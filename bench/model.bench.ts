import OpenAI from "openai";
import { expect, it } from "vitest";
import { counterIds } from "../src/domain";
import { ChatChunkAccumulator, type ModelRequest, OpenAIModelClient } from "../src/model";
import { median } from "./median";

/**
 * Harness overhead per streamed delta: our OpenAIModelClient (SDK SSE parsing + ChatChunkAccumulator +
 * abort race + event objects) against reading the same SSE body with the bare `openai` SDK
 * (`for await (const chunk of stream)`), both from an instant local fetch, in the same run.
 */
const DELTAS = 20_000;
/** How the body is cut into reads: bulk (a fast provider, a buffered proxy) and small (a live token stream). */
const READ_SIZES_BYTES = [16 * 1024, 512];
const WARMUP_ROUNDS = 2;
const ROUNDS = 15;
const REQUEST: ModelRequest = { system: "bench", messages: [], tools: [] };

function frame(delta: Record<string, unknown>, finish: string | null = null): string {
  return `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
}

function textBody(): Uint8Array {
  let s = frame({ role: "assistant", content: "" });
  for (let i = 0; i < DELTAS; i++) s += frame({ content: ` tok${i % 100}` });
  s += frame({}, "stop");
  s += `data: ${JSON.stringify({ id: "chatcmpl-bench", object: "chat.completion.chunk", created: 1, model: "bench", choices: [], usage: { prompt_tokens: 10, completion_tokens: DELTAS, total_tokens: DELTAS + 10 } })}\n\ndata: [DONE]\n\n`;
  return new TextEncoder().encode(s);
}

/** One tool call whose argument JSON arrives in DELTAS fragments. */
function toolArgsBody(): Uint8Array {
  let s = frame({ tool_calls: [{ index: 0, id: "call_bench", type: "function", function: { name: "write", arguments: '{"content":"' } }] });
  for (let i = 0; i < DELTAS; i++) s += frame({ tool_calls: [{ index: 0, function: { arguments: `x${i % 10}` } }] });
  s += frame({ tool_calls: [{ index: 0, function: { arguments: '"}' } }] });
  s += `${frame({}, "tool_calls")}data: [DONE]\n\n`;
  return new TextEncoder().encode(s);
}

/**
 * The same call from a server that repeats the call's name in every fragment and sends no id: each
 * fragment may then start another call, and asking whether the arguments so far are whole copied
 * them every time (hunt 93).
 */
function toolArgsNamedBody(): Uint8Array {
  const fragment = (args: string) => frame({ tool_calls: [{ index: 0, type: "function", function: { name: "write", arguments: args } }] });
  let s = fragment('{"content":"');
  for (let i = 0; i < DELTAS; i++) s += fragment(`x${i % 10}`);
  s += fragment('"}');
  s += `${frame({}, "tool_calls")}data: [DONE]\n\n`;
  return new TextEncoder().encode(s);
}

function instantFetch(bytes: Uint8Array, readBytes: number) {
  return async (): Promise<Response> => {
    let offset = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bytes.length) return controller.close();
        controller.enqueue(bytes.subarray(offset, offset + readBytes));
        offset += readBytes;
      },
    });
    return new Response(body, { headers: { "content-type": "text/event-stream" } });
  };
}

async function bareSdk(bytes: Uint8Array, readBytes: number): Promise<number> {
  const client = new OpenAI({
    apiKey: "sk-bench",
    baseURL: "https://bench.local/v1",
    fetch: instantFetch(bytes, readBytes),
    maxRetries: 0,
  });
  const stream = await client.chat.completions.create({
    model: "bench",
    messages: [{ role: "user", content: "go" }],
    stream: true,
    stream_options: { include_usage: true },
  });
  let chunks = 0;
  for await (const _chunk of stream) chunks++;
  return chunks;
}

async function ourClient(bytes: Uint8Array, readBytes: number): Promise<number> {
  const client = new OpenAIModelClient({
    apiKey: "sk-bench",
    baseURL: "https://bench.local/v1",
    model: "bench",
    fetch: instantFetch(bytes, readBytes),
    ids: counterIds(),
  });
  let events = 0;
  let last = "";
  for await (const event of client.stream(REQUEST, new AbortController().signal)) {
    events++;
    last = event.type;
  }
  expect(last).toBe("done");
  return events;
}

/** The accumulator alone, over chunks parsed in advance: the assembly cost without SSE/JSON parsing. */
function accumulatorOnly(chunks: unknown[]): () => Promise<number> {
  return async () => {
    const acc = new ChatChunkAccumulator(counterIds());
    let events = 0;
    for (const chunk of chunks) events += acc.push(chunk).length;
    return events + acc.finish().length;
  };
}

async function parsedChunks(bytes: Uint8Array): Promise<unknown[]> {
  const client = new OpenAI({
    apiKey: "sk-bench",
    baseURL: "https://bench.local/v1",
    fetch: instantFetch(bytes, 16 * 1024),
    maxRetries: 0,
  });
  const stream = await client.chat.completions.create({ model: "bench", messages: [], stream: true });
  const out: unknown[] = [];
  for await (const chunk of stream) out.push(chunk);
  return out;
}

/** Runs the contenders alternately (so drift hits all alike) and returns the median ns per delta of each. */
async function measure(contenders: Record<string, () => Promise<number>>): Promise<Record<string, number>> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
    for (const [name, run] of Object.entries(contenders)) {
      const start = performance.now();
      await run();
      const ns = ((performance.now() - start) * 1e6) / DELTAS;
      if (round >= WARMUP_ROUNDS) samples[name]!.push(ns);
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
}

it("model stream: harness overhead per delta vs the bare openai SDK", async () => {
  const text = textBody();
  const args = toolArgsBody();
  const named = toolArgsNamedBody();
  // Sanity: both paths see every delta.
  expect(await bareSdk(text, 512)).toBe(DELTAS + 3);
  expect(await ourClient(text, 512)).toBe(DELTAS + 1);
  expect(await ourClient(args, 512)).toBe(2);
  expect(await ourClient(named, 512)).toBe(2);

  const textChunks = await parsedChunks(text);
  const argChunks = await parsedChunks(args);
  const namedChunks = await parsedChunks(named);
  const rows: string[] = [];
  for (const readBytes of READ_SIZES_BYTES) {
    const reads = readBytes >= 1024 ? `${readBytes / 1024} KB reads` : `${readBytes} B reads`;
    const t = await measure({
      sdk: () => bareSdk(text, readBytes),
      ours: () => ourClient(text, readBytes),
      acc: accumulatorOnly(textChunks),
    });
    rows.push(row(`${DELTAS} text deltas, ${reads}`, t));
    const a = await measure({
      sdk: () => bareSdk(args, readBytes),
      ours: () => ourClient(args, readBytes),
      acc: accumulatorOnly(argChunks),
    });
    rows.push(row(`1 tool call in ${DELTAS} argument fragments, ${reads}`, a));
    const n = await measure({
      sdk: () => bareSdk(named, readBytes),
      ours: () => ourClient(named, readBytes),
      acc: accumulatorOnly(namedChunks),
    });
    rows.push(row(`1 tool call in ${DELTAS} fragments, each with the name and no id, ${reads}`, n));
  }
  console.log(
    [
      "",
      `model stream, ${DELTAS} deltas per body, ${(text.length / 1e6).toFixed(2)} MB text body / ${(args.length / 1e6).toFixed(2)} MB tool-args body, median of ${ROUNDS} rounds`,
      "| body | bare SDK ns/delta | OpenAIModelClient ns/delta | ratio | overhead ns/delta | accumulator alone ns/delta |",
      "| --- | --- | --- | --- | --- | --- |",
      ...rows,
    ].join("\n"),
  );
});

function row(label: string, r: Record<string, number>): string {
  return `| ${label} | ${r.sdk!.toFixed(0)} | ${r.ours!.toFixed(0)} | ${(r.ours! / r.sdk!).toFixed(2)}x | ${(r.ours! - r.sdk!).toFixed(0)} | ${r.acc!.toFixed(0)} |`;
}
