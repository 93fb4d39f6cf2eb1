// The pi-harness terminal client: `run` (pack, upload, open a session, stream the run), `sessions`,
// `workspaces`, `show <id>`, `changes <id>`, `abort <id>`, `delete <id>`. Exit codes: 0 done, 1 the run or a request failed, 2 bad usage,
// 130 a run stopped with Ctrl-C.
import { statSync } from "node:fs";
import path from "node:path";
import { parseArgs } from "node:util";
import { ApiError, HarnessApi } from "./api.mjs";
import { followRun } from "./event-stream.mjs";
import { packWorkspace } from "./pack.mjs";
import { oneLine, paint, RunProgress, visible } from "./progress.mjs";

export const DEFAULT_URL = "http://localhost:8787";

export const USAGE = `Usage: pi-harness <command> [options]

Commands:
  run [--workspace DIR | --session ID] "PROMPT"   run the agent and stream its progress
  sessions [--limit N] [--cursor C]                list your sessions, newest first
  workspaces [--limit N] [--cursor C]              list your uploaded workspaces, newest first
  show ID                                          a session's conversation
  changes ID                                       a session's changes as a diff (pipe to git apply)
  abort ID                                         stop a session's active run (or its compaction)
  delete ID                                        delete a session (s_...) or a workspace (w_...)

Options:
  --url URL              the harness (env PI_HARNESS_URL, default ${DEFAULT_URL})
  --token TOKEN          a bearer token of AUTH_TOKENS (env PI_HARNESS_TOKEN)
  --model NAME           another model, or replay:<sessionId>
  --allow-write          let the agent write and edit files
  --allow-bash           let the agent run bash (a simulated shell; it writes files only with --allow-write too)
  --workspace DIR        pack DIR like git would (.gitignore honoured; .git/, node_modules/ and .env* left out)
  --include-env          pack .env* files too
  --include-node-modules pack node_modules/ too
  --session ID           continue a session instead of opening a new one
  --json                 JSON for scripts: run prints its events, one per line; sessions,
                         workspaces, show and abort print the server's answer as one line;
                         delete prints nothing; changes is a diff either way
  -h, --help             this text`;

/** @typedef {{ write(text: string): unknown; isTTY?: boolean }} Output */
/**
 * @typedef {object} Io
 * @property {Output} stdout
 * @property {Output} stderr
 * @property {Record<string, string | undefined>} env
 * @property {string} [cwd] the working directory (default: process.cwd())
 * @property {number} [reconnectDelayMs]
 * @property {(handler: () => void) => () => void} [onInterrupt] calls `handler` on Ctrl-C; returns the unsubscribe (default: SIGINT)
 * @property {(code: number) => void} [exit] leaves at once (default: process.exit)
 */

/** @param {() => void} handler */
function onSigint(handler) {
  process.on("SIGINT", handler);
  return () => {
    process.off("SIGINT", handler);
  };
}

class UsageError extends Error {}

/**
 * The directory the user typed the command in, which relative paths are taken from. `npm run agent`
 * starts the client in this repository's root and keeps the caller's directory in INIT_CWD. Only
 * under that script: everything an npm script starts inherits INIT_CWD, wherever it then runs.
 * @param {Record<string, string | undefined>} env
 * @param {string} cwd
 */
export function callerDirectory(env, cwd) {
  const byNpmRunAgent = env.npm_lifecycle_event === "agent" && env.npm_package_name === "pi-harness" && env.INIT_CWD;
  return byNpmRunAgent ? /** @type {string} */ (env.INIT_CWD) : cwd;
}

/**
 * Runs one command line; resolves to the exit code.
 * @param {string[]} argv the arguments after the program name
 * @param {Io} io
 * @returns {Promise<number>}
 */
export async function main(argv, io) {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        url: { type: "string" },
        token: { type: "string" },
        model: { type: "string" },
        "allow-write": { type: "boolean", default: false },
        "allow-bash": { type: "boolean", default: false },
        workspace: { type: "string" },
        "include-env": { type: "boolean", default: false },
        "include-node-modules": { type: "boolean", default: false },
        session: { type: "string" },
        json: { type: "boolean", default: false },
        limit: { type: "string" },
        cursor: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (err) {
    io.stderr.write(`${/** @type {Error} */ (err).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === "help") {
    (values.help || command === "help" ? io.stdout : io.stderr).write(`${USAGE}\n`);
    return values.help || command === "help" ? 0 : 2;
  }
  const url = values.url ?? io.env.PI_HARNESS_URL ?? DEFAULT_URL;
  // The viewer's link (`.../#/s/...`) is not the API's address: every request would reach the page.
  if (/[#?]/.test(url)) {
    io.stderr.write(`--url ${visible(url)}: give the harness's address without a query or a fragment, e.g. ${DEFAULT_URL}\n\n${USAGE}\n`);
    return 2;
  }
  // `localhost:8787` would be read as a URL of the scheme "localhost:" and fail as "cannot reach" (hunt 58).
  if (!/^https?:\/\/[^/]/i.test(url)) {
    io.stderr.write(`--url ${visible(url)}: give the harness's address with http:// or https://, e.g. ${DEFAULT_URL}\n\n${USAGE}\n`);
    return 2;
  }
  const token = values.token ?? io.env.PI_HARNESS_TOKEN;
  const api = new HarnessApi(url, token);
  try {
    switch (command) {
      case "run":
        return await run(api, values, rest.join(" "), io);
      case "sessions":
        return await sessions(api, values, io);
      case "workspaces":
        return await workspaces(api, values, io);
      case "delete": {
        const id = oneId(rest, "give exactly one session (s_...) or workspace (w_...) id");
        await api.delete(id);
        if (!values.json) io.stdout.write(`deleted ${visible(id)}\n`);
        return 0;
      }
      case "show":
        return await show(api, oneId(rest), values.json, io);
      case "changes": {
        const diff = await api.changes(oneId(rest));
        // Raw for `| git apply`; on a terminal as `run` shows it, so a file's escape sequences stay text.
        io.stdout.write(io.stdout.isTTY === true ? colorDiff(diff, paint(io.env.NO_COLOR === undefined)) : diff);
        return 0;
      }
      case "abort": {
        const { aborted, runId } = await api.abort(oneId(rest));
        if (values.json) io.stdout.write(`${JSON.stringify({ aborted, runId })}\n`);
        // With no run active, abort ends a compaction under way (runId null).
        else
          io.stdout.write(
            !aborted ? "no run or compaction was active\n" : runId ? `aborted ${visible(runId)}\n` : "aborted the compaction\n",
          );
        return 0;
      }
      default:
        throw new UsageError(`unknown command '${command}'`);
    }
  } catch (err) {
    if (err instanceof UsageError) {
      io.stderr.write(`${err.message}\n\n${USAGE}\n`);
      return 2;
    }
    if (err instanceof ApiError) {
      io.stderr.write(`error: ${visible(`${err.code}: ${err.message}`)}${err.requestId ? ` (request ${visible(err.requestId)})` : ""}\n`);
      // The server's words name the header; a user of this client sets the token another way.
      if (err.code === "unauthorized") {
        io.stderr.write(
          !token
            ? "hint: the harness has AUTH_TOKENS set: give one of its tokens with --token or PI_HARNESS_TOKEN\n"
            : "hint: the token given (--token or PI_HARNESS_TOKEN) is not one of the harness's AUTH_TOKENS\n",
        );
      }
      return 1;
    }
    // Anything else (a directory that cannot be read, a file that went away while packing): its words, no stack.
    io.stderr.write(`error: ${visible(err instanceof Error ? err.message : String(err))}\n`);
    return 1;
  }
}

/** @param {string[]} rest @param {string} [usage] */
function oneId(rest, usage = "give exactly one session id") {
  if (rest.length !== 1) throw new UsageError(usage);
  return /** @type {string} */ (rest[0]);
}

/**
 * @param {HarnessApi} api
 * @param {Record<string, any>} values
 * @param {string} text
 * @param {Io} io
 */
async function run(api, values, text, io) {
  if (text.trim() === "") throw new UsageError('give the prompt, e.g. pi-harness run --workspace . "Where is the server started?"');
  if (values.session && values.workspace) throw new UsageError("a session keeps its workspace: give --session or --workspace, not both");
  const workspace = values.workspace && path.resolve(callerDirectory(io.env, io.cwd ?? process.cwd()), values.workspace);
  if (workspace) {
    const stat = statSync(workspace, { throwIfNoEntry: false });
    const where = workspace === values.workspace ? "" : ` (looked for ${workspace})`;
    if (!stat) throw new UsageError(`--workspace ${values.workspace}: no such directory${where}`);
    if (!stat.isDirectory())
      throw new UsageError(`--workspace ${values.workspace}: not a directory (give the project's directory; it is packed for you)`);
  }
  const color = io.stdout.isTTY === true && io.env.NO_COLOR === undefined;
  const progress = new RunProgress({ stdout: io.stdout, stderr: io.stderr, color, spinner: io.stderr.isTTY === true && !values.json });
  /** @param {string} line */
  const note = (line) => (values.json ? undefined : progress.note(line));

  let sessionId = values.session;
  let hasWorkspace = false;
  if (sessionId) {
    hasWorkspace = (await api.session(sessionId)).workspaceId !== null;
  } else {
    let workspaceId;
    if (workspace) {
      const packed = await packWorkspace(workspace, {
        includeEnv: values["include-env"],
        includeNodeModules: values["include-node-modules"],
      });
      const skipped =
        packed.skipped.length > 0
          ? `, skipped ${packed.skipped.length} (${packed.skipped.map((s) => `${s.path}: ${s.reason}`).join("; ")})`
          : "";
      note(`packed ${packed.files.length} files (${kib(packed.bytes)} KiB, ${kib(packed.archive.byteLength)} KiB compressed)${skipped}`);
      const uploaded = await api.uploadWorkspace(packed.archive, {
        onBusy: (seconds) => note(`the harness is busy with other uploads; trying again in ${seconds} s`),
      });
      workspaceId = uploaded.workspaceId;
      hasWorkspace = true;
      if (uploaded.skipped.length > 0)
        note(`the harness skipped ${uploaded.skipped.map((/** @type {any} */ s) => `${s.path} (${s.reason})`).join(", ")}`);
    }
    const created = await api.createSession({ ...(workspaceId ? { workspaceId } : {}), title: oneLine(text, 80) });
    sessionId = /** @type {string} */ (created.sessionId);
  }
  note(`session ${sessionId}${hasWorkspace ? "" : " (no workspace)"} · ${api.baseUrl}/#/s/${sessionId}`);

  const prompt = {
    text,
    allowWrite: values["allow-write"],
    allowBash: values["allow-bash"],
    ...(values.model ? { model: values.model } : {}),
  };
  /** @type {Record<string, any> | null} */
  let terminal = null;
  let userMessageId = null;
  /** The seq of the run's first event: its messages were stored after it (a long session's whole history is megabytes). */
  let firstSeq = null;
  // Ctrl-C stops the run on the server too (leaving the stream alone does not), and the stream goes
  // on to the run's end; a second Ctrl-C leaves at once.
  let interrupts = 0;
  const runSession = sessionId;
  /** This prompt's run, once its stream said: Ctrl-C names it, so a run that ended meanwhile is not mistaken for the next one. */
  /** @type {string | null} */
  let runId = null;
  const unsubscribe = (io.onInterrupt ?? onSigint)(() => {
    if (++interrupts > 1) return (io.exit ?? process.exit)(130);
    io.stderr.write("stopping the run (Ctrl-C again to leave without waiting)\n");
    api
      .abort(runSession, runId ?? undefined)
      .catch((/** @type {Error} */ err) => io.stderr.write(`could not stop the run: ${visible(err.message)}\n`));
  });
  try {
    const events = followRun(api, sessionId, prompt, {
      onReconnect: (info) => progress.reconnecting(info),
      reconnectDelayMs: io.reconnectDelayMs,
    });
    for await (const event of events) {
      if (values.json) io.stdout.write(`${JSON.stringify(event)}\n`);
      else progress.event(event);
      firstSeq ??= event.seq;
      if (event.type === "agent_started") runId ??= event.runId;
      if (event.type === "user_message_appended") userMessageId = event.messageId;
      if (event.type === "agent_completed" || event.type === "agent_error") terminal = event;
    }
  } finally {
    unsubscribe();
    progress.stop();
  }
  // Stopped by the user: the shell's code for Ctrl-C, once the run has ended.
  const done = terminal?.type === "agent_completed" ? 0 : 1;
  const exitCode = interrupts > 0 ? 130 : done;
  if (values.json) return exitCode;

  const p = paint(color);
  if (hasWorkspace) {
    const diff = await api.changes(sessionId);
    io.stdout.write(diff === "" ? `${p.dim("no changes")}\n` : `${p.bold("changes:")}\n${colorDiff(diff, p)}`);
  }
  const usage = await usageOfRun(api, sessionId, firstSeq, userMessageId);
  io.stdout.write(
    `${p.dim(`tokens: ${usage.inputTokens.toLocaleString("en-US")} in · ${usage.outputTokens.toLocaleString("en-US")} out · ${usage.totalTokens.toLocaleString("en-US")} total (${usage.calls} model call${usage.calls === 1 ? "" : "s"})`)}\n`,
  );
  if (terminal === null) {
    io.stderr.write("error: the run's stream ended without its final event\n");
    return 1;
  }
  return exitCode;
}

/**
 * The run's token usage from the messages stored since its first event (the whole log if its user
 * message is not among them).
 * @param {HarnessApi} api
 * @param {string} sessionId
 * @param {number | null} firstSeq
 * @param {string | null} userMessageId
 */
async function usageOfRun(api, sessionId, firstSeq, userMessageId) {
  if (firstSeq !== null) {
    const recent = await api.messages(sessionId, { after: firstSeq - 1 });
    if (recent.some((m) => m.id === userMessageId)) return runUsage(recent, userMessageId);
  }
  return runUsage(await api.messages(sessionId), userMessageId);
}

/**
 * The token usage of the run that starts at `userMessageId`: its assistant messages' usage summed.
 * @param {Record<string, any>[]} messages
 * @param {string | null} userMessageId
 */
export function runUsage(messages, userMessageId) {
  const start = messages.findIndex((m) => m.id === userMessageId);
  const total = { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 };
  for (const m of start < 0 ? [] : messages.slice(start + 1)) {
    if (m.kind === "user") break;
    if (m.kind !== "assistant" || !m.usage) continue;
    total.inputTokens += m.usage.inputTokens;
    total.outputTokens += m.usage.outputTokens;
    total.totalTokens += m.usage.totalTokens;
    total.calls++;
  }
  return total;
}

/**
 * @param {HarnessApi} api
 * @param {Record<string, any>} values
 * @param {Io} io
 */
async function sessions(api, values, io) {
  const page = await api.listSessions(pageOptions(values));
  if (values.json) {
    io.stdout.write(`${JSON.stringify(page)}\n`);
    return 0;
  }
  if (page.items.length === 0) io.stdout.write("no sessions\n");
  for (const s of page.items) io.stdout.write(`${s.id}  ${s.createdAt}  ${oneLine(s.title ?? "", 200)}\n`);
  if (page.nextCursor) io.stdout.write(`more: pi-harness sessions --cursor ${page.nextCursor}\n`);
  return 0;
}

/**
 * @param {HarnessApi} api
 * @param {Record<string, any>} values
 * @param {Io} io
 */
async function workspaces(api, values, io) {
  const page = await api.listWorkspaces(pageOptions(values));
  if (values.json) {
    io.stdout.write(`${JSON.stringify(page)}\n`);
    return 0;
  }
  if (page.items.length === 0) io.stdout.write("no workspaces\n");
  for (const w of page.items) io.stdout.write(`${w.workspaceId}  ${w.createdAt}  ${w.files} files, ${kib(w.bytes)} KiB\n`);
  if (page.nextCursor) io.stdout.write(`more: pi-harness workspaces --cursor ${page.nextCursor}\n`);
  return 0;
}

/** `--limit` and `--cursor` of a list command. @param {Record<string, any>} values */
function pageOptions(values) {
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && !Number.isInteger(limit)) throw new UsageError("--limit takes a whole number");
  return { limit, cursor: values.cursor };
}

/**
 * @param {HarnessApi} api
 * @param {string} id
 * @param {boolean} json
 * @param {Io} io
 */
async function show(api, id, json, io) {
  const info = await api.session(id);
  const messages = await api.messages(id);
  if (json) {
    io.stdout.write(`${JSON.stringify({ session: info, messages })}\n`);
    return 0;
  }
  const p = paint(io.stdout.isTTY === true && io.env.NO_COLOR === undefined);
  io.stdout.write(
    `${p.bold(oneLine(info.title ?? id, 200))}\n${p.dim(`${id} · ${info.status} · ${info.counts.messages} messages · created ${info.createdAt}`)}\n\n`,
  );
  for (const m of messages) {
    if (m.kind === "user") io.stdout.write(`${p.cyan(">")} ${visible(m.text)}\n\n`);
    else if (m.kind === "assistant") {
      if (m.text !== "") io.stdout.write(`${visible(m.text)}\n`);
      for (const call of m.toolCalls ?? []) io.stdout.write(`${p.dim(`→ ${oneLine(call.name, 100)} ${oneLine(call.arguments, 100)}`)}\n`);
      if (!["STOP", "TOOL_CALLS"].includes(m.stopReason)) io.stdout.write(`${p.yellow(`(${m.stopReason})`)}\n`);
      io.stdout.write("\n");
    } else if (m.kind === "tool_result") {
      const mark = m.error ? p.red("✗") : p.green("✓");
      io.stdout.write(`${mark} ${p.bold(oneLine(m.toolName, 100))} ${p.dim(oneLine(m.resultText.split("\n")[0] ?? "", 100))}\n\n`);
    }
  }
  return 0;
}

/** @param {number} bytes */
function kib(bytes) {
  return (bytes / 1024).toFixed(1);
}

/** The diff for a terminal (`changes` prints it raw, for `git apply`). @param {string} diff @param {import("./progress.mjs").Paint} p */
function colorDiff(diff, p) {
  return visible(diff)
    .split("\n")
    .map((line) =>
      line.startsWith("+++") || line.startsWith("---") || line.startsWith("diff ")
        ? p.bold(line)
        : line.startsWith("+")
          ? p.green(line)
          : line.startsWith("-")
            ? p.red(line)
            : line.startsWith("@@")
              ? p.cyan(line)
              : line,
    )
    .join("\n");
}
