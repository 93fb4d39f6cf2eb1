// An OpenAI-compatible chat-completions server for black-box runs: answers are chosen by the last
// line of the last user message, every request body is kept for inspection (GET /__requests). Test tooling only.
import http from "node:http";

const encoder = (obj) => `data: ${JSON.stringify(obj)}\n\n`;
const delta = (content) => encoder({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] });
const finish = (reason) =>
  encoder({
    id: "c",
    object: "chat.completion.chunk",
    choices: [{ index: 0, delta: {}, finish_reason: reason }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/**
 * Modes, from the last user message:
 *   BIG <chars> <delta>   the answer in tiny deltas, written in 64 KB bursts
 *   SLOW <n> <ms>         n deltas, one every ms
 *   TOOL <name> <json>    one tool call, then (after its result) "done"
 *   HANG                  one delta, then nothing (for crash tests)
 *   JSONANSWER            a whole completion as one JSON body (a server that ignores stream: true)
 *   REFUSAL               the answer as OpenAI's `refusal` deltas
 *   KEYECHO <key> <n>     401 whose message quotes the key after n characters (where the clip cuts it)
 *   BLANKTOOL             a tool call named " " (then "done")
 *   anything else         "hello world"
 */
export function startFakeModel(port = 0) {
  const requests = [];
  const server = http.createServer(async (req, res) => {
    if (req.method === "GET" && req.url === "/__requests") {
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(requests));
    }
    // Decoded once whole: a character split across two chunks would become U+FFFD (hunt 109).
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = Buffer.concat(chunks).toString("utf8");
    const parsed = JSON.parse(body || "{}");
    requests.push(parsed);
    const messages = parsed.messages ?? [];
    // Its last line: a prompt after a run stopped before it answered reaches the model joined to
    // that run's ("SLOW 50 100\n\nSLOW 10 100"), and was read as 50 ticks without a pause.
    const lastUser = String(messages.filter((m) => m.role === "user").at(-1)?.content ?? "")
      .split("\n")
      .at(-1);
    const last = messages.at(-1);
    const [mode, a, b] = String(lastUser).split(" ");
    if (mode === "JSONANSWER") {
      const completion = {
        id: "c",
        object: "chat.completion",
        choices: [{ index: 0, message: { role: "assistant", content: "the whole answer" }, finish_reason: "stop" }],
      };
      res.writeHead(200, { "content-type": "application/json" });
      return res.end(JSON.stringify(completion));
    }
    if (mode === "KEYECHO") {
      res.writeHead(401, { "content-type": "application/json" });
      return res.end(JSON.stringify({ error: { message: `${"x".repeat(Number(b))} invalid api key: ${a}` } }));
    }
    res.writeHead(200, { "content-type": "text/event-stream" });
    if (mode === "BIG") {
      const total = Number(a);
      const size = Number(b);
      let buffered = "";
      for (let sent = 0; sent < total; sent += size) {
        buffered += delta("a".repeat(Math.min(size, total - sent)));
        if (buffered.length > 65536) {
          res.write(buffered);
          buffered = "";
        }
      }
      res.write(buffered);
    } else if (mode === "SLOW") {
      for (let i = 0; i < Number(a); i++) {
        res.write(delta(`tick ${i} `));
        await sleep(Number(b));
      }
    } else if (mode === "TOOL" && last?.role !== "tool") {
      const args = String(lastUser).split(" ").slice(2).join(" ") || "{}";
      res.write(
        encoder({
          id: "c",
          object: "chat.completion.chunk",
          choices: [
            {
              index: 0,
              delta: {
                tool_calls: [{ index: 0, id: `call_${requests.length}`, type: "function", function: { name: a, arguments: args } }],
              },
            },
          ],
        }),
      );
      res.write(finish("tool_calls"));
      return res.end("data: [DONE]\n\n");
    } else if (mode === "REFUSAL") {
      res.write(encoder({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { refusal: "I can't help " } }] }));
      res.write(encoder({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { refusal: "with that." } }] }));
    } else if (mode === "BLANKTOOL" && last?.role !== "tool") {
      const call = { index: 0, id: `call_${requests.length}`, type: "function", function: { name: " ", arguments: "{}" } };
      res.write(encoder({ id: "c", object: "chat.completion.chunk", choices: [{ index: 0, delta: { tool_calls: [call] } }] }));
      res.write(finish("tool_calls"));
      return res.end("data: [DONE]\n\n");
    } else if (mode === "HANG") {
      res.write(delta("partial answer "));
      return; // never ends; the harness is killed meanwhile
    } else {
      const toolDone = mode === "TOOL" || mode === "BLANKTOOL";
      res.write(delta(toolDone ? "done" : "hello "));
      if (!toolDone) res.write(delta("world"));
    }
    res.write(finish("stop"));
    res.end("data: [DONE]\n\n");
  });
  return new Promise((resolve) => {
    server.listen(port, "127.0.0.1", () => resolve({ server, port: server.address().port, requests }));
  });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const { port } = await startFakeModel(Number(process.env.PORT ?? 9911));
  console.log(`fake model on http://127.0.0.1:${port}/v1`);
}
