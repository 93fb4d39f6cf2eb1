import { createParser, type EventSourceMessage } from "eventsource-parser";

export interface SseFrame {
  id: number;
  event: string;
  data: Record<string, unknown>;
}

/**
 * Reads an SSE response with eventsource-parser. Stops (and cancels the body, like a client that
 * disconnects) after `limit` frames; otherwise reads to the end. Comments are counted separately.
 */
export async function readSse(response: Response, limit = Infinity): Promise<{ frames: SseFrame[]; comments: string[]; ended: boolean }> {
  const frames: SseFrame[] = [];
  const comments: string[] = [];
  const parser = createParser({
    onEvent: (message: EventSourceMessage) =>
      frames.push({ id: Number(message.id), event: message.event ?? "message", data: JSON.parse(message.data) }),
    onComment: (comment) => comments.push(comment),
  });
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  while (frames.length < limit) {
    const { done, value } = await reader.read();
    if (done) return { frames, comments, ended: true };
    parser.feed(decoder.decode(value, { stream: true }));
  }
  await reader.cancel();
  return { frames: frames.slice(0, limit), comments, ended: false };
}
