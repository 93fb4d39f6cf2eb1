// Starts `wrangler dev` (what `npm run dev` runs) on a free port with its own state directory and a
// model pointed at the fake server. Test tooling only.
import { spawn } from "node:child_process";
import net from "node:net";

export function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/**
 * `vars`: more `--var NAME:value` bindings (AUTH_TOKENS, STREAM_TOKEN_SECRET, ...). Started again
 * when it exits because a port was taken: wrangler picks the runtime's internal ports itself, and
 * once (CI, 2026-12-05) one it picked was bound by then ("Address already in use"), which failed a
 * restart and every check after it.
 */
export async function startDevServer(options) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(options);
    } catch (error) {
      if (attempt >= 3 || !/Address already in use/.test(error.message)) throw error;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function startOnce({ port, persistTo, modelUrl, vars = {} }) {
  const args = [
    "wrangler",
    "dev",
    "--port",
    String(port),
    "--ip",
    "127.0.0.1",
    "--persist-to",
    persistTo,
    // Its own devtools port too: the default (9229) is taken as soon as another wrangler dev runs.
    "--inspector-port",
    String(await freePort()),
    "--show-interactive-dev-session=false",
    "--var",
    `OPENAI_BASE_URL:${modelUrl}`,
    "--var",
    "OPENAI_API_KEY:sk-blackbox",
    "--var",
    "MODEL:fake",
    ...Object.entries(vars).flatMap(([name, value]) => ["--var", `${name}:${value}`]),
  ];
  const child = spawn("npx", args, {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
    env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
  });
  let log = "";
  child.stdout.on("data", (d) => (log += d));
  child.stderr.on("data", (d) => (log += d));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 240; i++) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early:\n${log}`);
    try {
      const res = await fetch(`${base}/healthz`);
      if (res.status === 200) return { base, child, log: () => log, stop: (signal = "SIGTERM") => stop(child, signal) };
    } catch {}
    await new Promise((r) => setTimeout(r, 250));
  }
  stop(child, "SIGKILL");
  throw new Error(`wrangler dev did not start:\n${log}`);
}

function stop(child, signal) {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once("exit", () => resolve());
    try {
      process.kill(-child.pid, signal); // the whole group: npx, wrangler, workerd
    } catch {
      resolve();
    }
  });
}
