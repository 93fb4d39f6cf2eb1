import { describe, expect, it } from "vitest";
import { rewriteLegacyErrorLines } from "../../src/model";
import { bodyOf } from "./helpers";

const encoder = new TextEncoder();

async function rewritten(parts: (string | Uint8Array)[]): Promise<Uint8Array> {
  return new Uint8Array(await new Response(rewriteLegacyErrorLines(bodyOf(parts))).arrayBuffer());
}

/** Every way of cutting `bytes` into two reads. */
function twoWaySplits(bytes: Uint8Array): Uint8Array[][] {
  return Array.from({ length: bytes.length + 1 }, (_, cut) => [bytes.slice(0, cut), bytes.slice(cut)]);
}

describe("rewriteLegacyErrorLines", () => {
  it("passes a stream without `error:` lines through byte for byte, however it is split", async () => {
    const stream = 'data: {"c":"한🙂 error: x"}\r\n\r\n: error: comment\rxerror: no\n error: indented\n\ndata: [DONE]';
    const bytes = new Uint8Array([0xef, 0xbb, 0xbf, ...encoder.encode(stream), 0xff]); // a BOM in front, an invalid byte at the end
    for (const parts of twoWaySplits(bytes)) expect(await rewritten(parts)).toEqual(bytes);
  });

  it("rewrites an `error:` line into a `data:` line and keeps the bytes around it, however it is split", async () => {
    const input = encoder.encode('data: {"a":1}\n\nerror: {"code":400,"message":"é"}\r\n\r\ndata: [DONE]\n\n');
    const expected = encoder.encode('data: {"a":1}\n\ndata: {"error":{"code":400,"message":"é"}}\r\n\r\ndata: [DONE]\n\n');
    for (const parts of twoWaySplits(input)) expect(await rewritten(parts)).toEqual(expected);
  });

  it("wraps a value that is not JSON as the error's text, also on a last line without a line break", async () => {
    expect(new TextDecoder().decode(await rewritten(["error: slot 0 crashed\nerror:", ' {"code":500}']))).toBe(
      'data: {"error":"slot 0 crashed"}\ndata: {"error":{"code":500}}',
    );
  });

  it("hands on an event at a time, each in one read, a blank line split across reads too (hunt 108)", async () => {
    // The SDK joins an unfinished event again on every read: 30 MB in many lines of one event held the isolate 82 s.
    const reads = async (parts: string[]) => {
      const reader = rewriteLegacyErrorLines(bodyOf(parts)).getReader();
      const out: string[] = [];
      for (let next = await reader.read(); !next.done; next = await reader.read()) out.push(new TextDecoder().decode(next.value));
      return out;
    };
    expect(await reads(["data: a\n", "data: b\n", "\n", "data: c\n\ndata: d", "\n\n"])).toEqual([
      "data: a\ndata: b\n\n",
      "data: c\n\n",
      "data: d\n\n",
    ]);
    expect(await reads(["data: a\r\n", "\r", "\ndata: b\r", "\rdata: c\n", "\n"])).toEqual([
      "data: a\r\n\r\n",
      "data: b\r\r",
      "data: c\n\n",
    ]);
    // An event cut by the body's end is handed on as it is.
    expect(await reads(["data: a\n", "data: b"])).toEqual(["data: a\ndata: b"]);
  });

  it("leaves out an event that holds no data, as the SSE standard does: the SDK failed parsing its empty data (hunt 109)", async () => {
    const kept = ["data: a", ": comment only", "id: 4", "retry: 10", "event: message\ndata: b", "data: [DONE]"];
    const dropped = ["event: ping", "event: x\ndata:", "data", "data: \ndata:", ": c\nevent: y\nid: 5"];
    for (const newline of ["\n", "\r\n", "\r"]) {
      const events = (list: string[]) => list.map((event) => `${event.replaceAll("\n", newline)}${newline}${newline}`);
      const input = encoder.encode([...events(kept), ...events(dropped)].sort((x, y) => x.localeCompare(y)).join(""));
      const expected = encoder.encode(
        events(kept)
          .sort((x, y) => x.localeCompare(y))
          .join(""),
      );
      for (const parts of twoWaySplits(input))
        expect(new TextDecoder().decode(await rewritten(parts)), JSON.stringify(newline)).toBe(new TextDecoder().decode(expected));
    }
  });

  it("cuts an event one byte over the bound, also when the read that ends it takes it over (hunt 109)", async () => {
    const outcome = async (parts: string[]) => {
      const reader = rewriteLegacyErrorLines(bodyOf(parts), undefined, 20).getReader();
      let text = "";
      try {
        for (let next = await reader.read(); !next.done; next = await reader.read()) text += new TextDecoder().decode(next.value);
        return text;
      } catch (err) {
        return (err as { failure?: { code: string } }).failure?.code;
      }
    };
    // 20 bytes with its blank line: at the bound. 21: over it, whichever read ends it.
    const atBound = "data: 0123456789ab\n\n";
    const overBound = "data: 0123456789abc\n\n";
    expect([atBound.length, overBound.length]).toEqual([20, 21]);
    for (let cut = 0; cut <= overBound.length; cut++) {
      expect(await outcome([atBound.slice(0, cut), atBound.slice(cut) + atBound]), `at ${cut}`).toBe(atBound + atBound);
      expect(await outcome([overBound.slice(0, cut), `${overBound.slice(cut)}data: x\n\n`]), `over ${cut}`).toBe("output_too_large");
      expect(await outcome([`data: x\n\n${overBound.slice(0, cut)}`, `${overBound.slice(cut)}data: x\n\n`]), `after ${cut}`).toBe(
        "output_too_large",
      );
    }
  });

  it("cancels the body when the request's signal aborts, and settles the read waiting on it (hunt 101)", async () => {
    // workerd left the read of an aborted request's body pending: the body, its reader and the abort's
    // DOMException stayed in the isolate, one set per aborted run.
    const cancelled: unknown[] = [];
    const body = new ReadableStream<Uint8Array>({ pull: () => new Promise(() => {}), cancel: (reason) => void cancelled.push(reason) });
    const request = new AbortController();
    const read = rewriteLegacyErrorLines(body, request.signal).getReader().read();
    request.abort("run aborted");
    expect([await read, cancelled]).toEqual([{ done: true, value: undefined }, ["run aborted"]]);
    // A body read to its end is not cancelled by the abort that closes every attempt.
    const whole = new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(encoder.encode("data: 1\n\n"));
        controller.close();
      },
      cancel: (reason) => void cancelled.push(reason),
    });
    const done = new AbortController();
    expect(await new Response(rewriteLegacyErrorLines(whole, done.signal)).text()).toBe("data: 1\n\n");
    done.abort("closed");
    expect(cancelled).toEqual(["run aborted"]);
  });
});
