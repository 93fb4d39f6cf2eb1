/** The comment line servers send so proxies and clients see the stream is alive. */
export const SSE_PING = ": ping\n\n";
/** Send a ping at least this often; edges drop streams that stay silent for long. */
export const SSE_PING_INTERVAL_MS = 15_000;
/** How long a client waits before reconnecting, sent as the stream's first field (`retry:`). */
export const SSE_RETRY_MS = 2_000;
/** The frame that sets the client's reconnection delay; it dispatches no event. */
export const SSE_RETRY = `retry: ${SSE_RETRY_MS}\n\n`;

/**
 * One Server-Sent Events frame: `id: <seq>`, `event: <name>`, `data: <json>`. The id and name must
 * not contain line breaks (that would forge fields); data lines are split per the SSE spec, although
 * JSON from JSON.stringify never contains a raw newline.
 */
export function sseFrame(id: number, event: string, data: string): string {
  if (/[\r\n]/.test(event)) throw new Error("an SSE event name cannot contain a line break");
  if (!Number.isSafeInteger(id) || id < 0) throw new Error("an SSE id must be a non-negative integer");
  const lines = data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`);
  return `id: ${id}\nevent: ${event}\n${lines.join("")}\n`;
}

/**
 * A streaming response; `x-run-id` names the run being tailed, when there is one. Events carry their
 * seq as the SSE id and in `data`.
 */
export function sseResponse(body: ReadableStream<Uint8Array> | null, runId: string | null): Response {
  const headers = new Headers({
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  if (runId) headers.set("x-run-id", runId);
  return new Response(body, { headers });
}
