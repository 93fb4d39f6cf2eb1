import http from "node:http";
import { Store } from "./store.js";

const PORT = 3000;
const store = new Store();

export const server = http.createServer(async (req, res) => {
  const match = /^\/kv\/([^/]+)$/.exec(req.url ?? "");
  if (!match) return send(res, 404, "no such route\n");
  const key = decodeURIComponent(match[1]);
  if (req.method === "GET") {
    const value = store.get(key);
    return value === undefined ? send(res, 404, "no such key\n") : send(res, 200, value);
  }
  if (req.method === "PUT") {
    let body = "";
    for await (const chunk of req) body += chunk;
    store.set(key, body);
    return send(res, 204, "");
  }
  if (req.method === "DELETE") return send(res, store.delete(key) ? 204 : 404, "");
  return send(res, 405, "method not allowed\n");
});

function send(res, status, body) {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
  res.end(body);
}

server.listen(PORT, () => console.log(`tiny-kv listening on http://localhost:${PORT}`));
