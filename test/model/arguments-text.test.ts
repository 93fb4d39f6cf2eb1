import { describe, expect, it } from "vitest";
import { counterIds } from "../../src/domain";
import { ChatChunkAccumulator } from "../../src/model";
import { ArgumentsText, isCompleteJson } from "../../src/model/arguments-text";
import { random } from "../workspace/search/helpers";
import { chunk } from "./helpers";

describe("a tool call's arguments as their fragments arrive", () => {
  it("say what trimming and parsing the whole text says (as the reader asked before), after every fragment of 3,000 generated streams", () => {
    const next = random(31);
    const pieces = ["{", "}", "[", "]", '"', "\\", '\\"', ":", ",", " ", "\n", "\u00a0", "\ufeff", "a", "1", '"k":', '{"a":1}', "}}", "x"];
    // Mostly valid objects cut anywhere, with pieces dropped in, so that whole objects come often.
    const objects = [
      '{"path":"a.txt","content":"x}\\"{y"}',
      '{"a":[1,{"b":"]"}],"c":null}',
      "{}",
      ' \n{"q":"\\\\"}\u00a0',
      '{"s":"\\u007d"}',
    ];
    let whole = 0;
    let compared = 0;
    for (let s = 0; s < 3000; s++) {
      let source = objects[Math.floor(next() * objects.length)]!;
      for (let k = Math.floor(next() * 3); k > 0; k--) {
        const at = Math.floor(next() * (source.length + 1));
        source = source.slice(0, at) + pieces[Math.floor(next() * pieces.length)] + source.slice(at);
      }
      if (next() < 0.3) source += pieces[Math.floor(next() * pieces.length)];
      const args = new ArgumentsText();
      for (let at = 0; at < source.length; ) {
        const end = at + 1 + Math.floor(next() * 6);
        args.append(source.slice(at, end));
        at = end;
        const text = source.slice(0, at);
        expect(args.text).toBe(text);
        expect([args.hasContent, args.isWholeObject], JSON.stringify(text)).toEqual([text.trim() !== "", isCompleteJson(text)]);
        if (args.isWholeObject && args.hasContent) whole++;
        compared++;
      }
    }
    expect([compared, whole]).toEqual([19138, 1444]);
  });

  it("are read in time linear in their length when every fragment repeats the call's name (hunt 93)", () => {
    // 800,000 characters in 16-character fragments, as a server that sends the name each time and
    // no id: each fragment copied the text so far, 64 s here and over HTTP (now 0.1-0.2 s).
    const content = "0123456789abcdef".repeat(50_000);
    const raw = JSON.stringify({ path: "big.txt", content });
    const acc = new ChatChunkAccumulator(counterIds());
    for (let at = 0; at < raw.length; at += 16) {
      acc.push(chunk({ tool_calls: [{ index: 0, function: { name: "write", arguments: raw.slice(at, at + 16) } }] }));
    }
    acc.push(chunk({}, "tool_calls"));
    const events = acc.finish();
    expect(events.map((e) => e.type)).toEqual(["tool_call", "done"]);
    const call = events[0]!.type === "tool_call" ? events[0]!.call : null;
    expect(call?.name).toBe("write");
    expect(call?.arguments).toEqual({ path: "big.txt", content });
  });

  it("still start a new call when a whole call came and the next fragment names one, without an id", () => {
    const acc = new ChatChunkAccumulator(counterIds());
    for (const args of ['{"path":', '"a"}', '{"path":"b"}']) {
      acc.push(chunk({ tool_calls: [{ index: 0, function: { name: "read", arguments: args } }] }));
    }
    acc.push(chunk({}, "tool_calls"));
    expect(acc.finish().flatMap((e) => (e.type === "tool_call" ? [e.call.arguments] : []))).toEqual([{ path: "a" }, { path: "b" }]);
  });
});
