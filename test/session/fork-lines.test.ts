import { describe, expect, it } from "vitest";
import type { AgentMessage } from "../../src/domain";
import { messageLines, readMessageLines } from "../../src/session/session-fork";
import { userMessage } from "../helpers/records";

/** `text` as a byte stream cut into chunks of `size` bytes (so UTF-8 characters and lines are split anywhere). */
function chunked(text: string, size: number): ReadableStream<Uint8Array> {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) return controller.close();
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  });
}

describe("a fork's messages as JSONL", () => {
  const messages: AgentMessage[] = [
    userMessage("s_a", "m_1", "plain"),
    userMessage("s_a", "m_2", `${"é😀\u2028".repeat(50_000)}\nwith a line break`, "m_1"),
    userMessage("s_a", "m_3", "", "m_2"),
  ];

  it("reads back what messageLines wrote, whatever the chunks' sizes", async () => {
    let text = "";
    for await (const part of messageLines(messages)) text += part;
    expect(text.split("\n").length).toBe(4);
    for (const size of [1, 7, 4096, 1 << 20]) expect(await readMessageLines(chunked(text, size))).toEqual(messages);
  });

  it("reads a last line without its newline, and no message from an empty stream", async () => {
    expect(await readMessageLines(chunked(JSON.stringify(messages[0]), 3))).toEqual([messages[0]]);
    expect(await readMessageLines(chunked("", 3))).toEqual([]);
  });
});
