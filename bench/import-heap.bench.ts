import { expect, it } from "vitest";
import { readStreamBytes } from "../src/api/body";
import { readConversation, readConversationBody } from "../src/api/conversation-import";
import { MAX_IMPORT_BYTES } from "../src/domain";
import { heap, liveReading, mb, measure, sampled } from "./heap-measure";

/**
 * In-isolate memory of reading a conversation import at the size limit (16 MiB of JSONL, 10,000
 * messages), streamed (`readConversationBody`, what POST /api/sessions/import does) next to the
 * whole-body read it replaced (the bytes, then their text, then the messages). Each takes a reading
 * after a full GC at the point the route sends the messages to the session, with what it still
 * holds. Only with `--inspect` (see bench/workspace-heap.bench.ts); skipped otherwise.
 */
const CHUNK = 64 * 1024;

function conversation(): Uint8Array {
  const lines: string[] = [];
  let bytes = 0;
  let parent: string | null = null;
  for (let n = 1; n <= 10_000; n++) {
    const id = `m_${n}`;
    const base = { sessionId: "s_bench", createdAt: "2026-12-03T00:00:00.000Z", id, parentId: parent };
    const line = JSON.stringify(
      n % 2 === 1
        ? { ...base, kind: "user", text: `question ${n}: ${"q".repeat(1500)}` }
        : { ...base, kind: "assistant", text: `answer ${n}: ${"a".repeat(1500)}`, stopReason: "STOP" },
    );
    if (bytes + line.length + 1 > MAX_IMPORT_BYTES) break;
    lines.push(line);
    bytes += line.length + 1;
    parent = id;
  }
  return new TextEncoder().encode(`${lines.join("\n")}\n`);
}

/** `bytes` as a request body arrives: 64 KiB chunks (views, no copies). */
function body(bytes: Uint8Array): ReadableStream<Uint8Array> {
  let offset = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (offset >= bytes.byteLength) return controller.close();
      controller.enqueue(bytes.subarray(offset, offset + CHUNK));
      offset += CHUNK;
    },
  });
}

it.skipIf(!heap)("conversation import at the size limit: streamed vs whole-body read", async () => {
  const jsonl = conversation();
  const rows: string[] = [];
  const cases: [string, () => Promise<number>][] = [
    [
      "streamed: readConversationBody (now)",
      async () => {
        const { messages } = await readConversationBody(sampled(body(jsonl), false), MAX_IMPORT_BYTES);
        await liveReading();
        return messages.length;
      },
    ],
    [
      "whole body: bytes, text, messages (before)",
      async () => {
        const bytes = await readStreamBytes(sampled(body(jsonl), false), MAX_IMPORT_BYTES);
        const text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
        const messages = readConversation(text);
        await liveReading();
        // Held to here, as the route held them while it sent the messages.
        return messages.length + (bytes.byteLength > 0 ? 0 : 1) + (text.length > 0 ? 0 : 1);
      },
    ],
  ];
  const counts: number[] = [];
  for (const [label, read] of cases) {
    // What is live before it (the bench's garbage collected), then the read itself.
    const before = (await measure(liveReading)).reading.livePeak;
    const { reading, ms, value } = await measure(read);
    counts.push(value);
    rows.push(
      `| ${label} | ${ms.toFixed(0)} ms | ${mb(before)} | ${mb(reading.peakTotal)} (+${mb(reading.peakTotal - before)}) | ${mb(reading.livePeak)} (+${mb(reading.livePeak - before)}) | ${reading.samples} |`,
    );
  }
  expect(counts[0]).toBe(counts[1]);
  console.log(
    `\nconversation import, in-isolate memory: ${counts[0]} messages, ${jsonl.byteLength.toLocaleString("en-US")} B of JSONL (held by the bench throughout)\n` +
      "| read | time | live before MB | peak used + backing MB (growth) | live after a full GC, with what the route holds MB (growth) | samples |\n" +
      "| --- | --- | --- | --- | --- | --- |\n" +
      `${rows.join("\n")}\n`,
  );
});
