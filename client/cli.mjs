// The pi-harness terminal client: `run` (pack, upload, open a session, stream the run), `sessions`,
// `workspaces`, `show <id>`, `changes <id>`, `abort <id>`, `delete <id>`. Exit codes: 0 done, 1 the run or a request failed, 2 bad usage,
// 130 a run (or the setup before its prompt) stopped with Ctrl-C.
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
  --include-ignored      pack what .gitignore leaves out too (a build output; .git/, node_modules/ and .env* still out)
  --session ID           continue a session instead of opening a new one
  --when-busy MODE       with --session, while another run is active: steer (give it this message at
                         its next turn) or followUp (run it after); without, a busy session refuses
  --json                 JSON for scripts: run prints its events, one per line, and lines of its
                         own (no seq): packed, uploaded (what was left out), session, interrupted;
                         sessions, workspaces, show and abort print the server's answer as one line;
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
      tokens: true,
      options: {
        url: { type: "string" },
        token: { type: "string" },
        model: { type: "string" },
        "allow-write": { type: "boolean", default: false },
        "allow-bash": { type: "boolean", default: false },
        workspace: { type: "string" },
        "include-env": { type: "boolean", default: false },
        "include-node-modules": { type: "boolean", default: false },
        "include-ignored": { type: "boolean", default: false },
        session: { type: "string" },
        "when-busy": { type: "string" },
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
  const { values, positionals, tokens } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined || command === "help") {
    (values.help || command === "help" ? io.stdout : io.stderr).write(`${USAGE}\n`);
    return values.help || command === "help" ? 0 : 2;
  }
  // An option of another command, or an id `sessions` does not take, would pass without a word (hunt 77).
  const misfit = misfitArgument(command, tokens ?? [], rest);
  if (misfit) {
    io.stderr.write(`${misfit}\n\n${USAGE}\n`);
    return 2;
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
  // fetch refuses a URL with a user name or password, which "cannot reach" would then print (hunt 77).
  if (/^https?:\/\/[^/]*@/i.test(url)) {
    io.stderr.write(`--url: give the harness's address without a user name or password (a token goes in --token)\n\n${USAGE}\n`);
    return 2;
  }
  // A token pasted with its line break is fine; one holding a character a header cannot carry is not.
  const token = (values.token ?? io.env.PI_HARNESS_TOKEN)?.trim();
  if (token && /[^\x21-\x7e]/.test(token)) {
    io.stderr.write("the token (--token or PI_HARNESS_TOKEN) holds a space, a control or a non-ASCII character, which no token has\n");
    return 2;
  }
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
        const diff = await api.changes(oneId(rest), { onBusy: busyNote(io) });
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
      // The server's advice names the body's field; this client's option is --when-busy.
      const message = err.code === "session_busy" ? err.message.replace(/send with whenBusy\b/, "run it with --when-busy") : err.message;
      io.stderr.write(`error: ${visible(`${err.code}: ${message}`)}${err.requestId ? ` (request ${visible(err.requestId)})` : ""}\n`);
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

/** The options each command takes (besides --url, --token, --json and --help, which all do). */
const COMMAND_OPTIONS = /** @type {Record<string, string[]>} */ ({
  run: [
    "model",
    "allow-write",
    "allow-bash",
    "workspace",
    "include-env",
    "include-node-modules",
    "include-ignored",
    "session",
    "when-busy",
  ],
  sessions: ["limit", "cursor"],
  workspaces: ["limit", "cursor"],
  show: [],
  changes: [],
  abort: [],
  delete: [],
});
const COMMON_OPTIONS = ["url", "token", "json", "help"];

/**
 * Why the command line gives an argument its command does not take, or null: an option of another
 * command, an id for a list, an empty --workspace (a script's unset variable).
 * @param {string} command
 * @param {ReturnType<typeof parseArgs>["tokens"] & {}} tokens
 * @param {string[]} rest the positionals after the command
 */
function misfitArgument(command, tokens, rest) {
  const own = COMMAND_OPTIONS[command];
  if (!own) return null; // an unknown command, told as such
  for (const token of tokens) {
    if (token.kind !== "option" || COMMON_OPTIONS.includes(token.name) || own.includes(token.name)) continue;
    return `${token.rawName} does not apply to ${command}`;
  }
  if ((command === "sessions" || command === "workspaces") && rest.length > 0) {
    return `${command} takes no ${rest.length === 1 ? "argument" : "arguments"} (${visible(rest.join(" "))}): did you mean show or changes?`;
  }
  if (tokens.some((t) => t.kind === "option" && t.name === "workspace" && t.value === "")) return "--workspace: give a directory";
  return null;
}

/** The note for a download the session refuses while it serves others. @param {Io} io */
function busyNote(io) {
  return (/** @type {number} */ seconds) => {
    io.stderr.write(`the session is serving other downloads; trying again in ${seconds} s\n`);
  };
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
  const whenBusy = values["when-busy"];
  if (whenBusy !== undefined && !["steer", "followUp"].includes(whenBusy)) throw new UsageError("--when-busy takes steer or followUp");
  if (whenBusy !== undefined && !values.session) throw new UsageError("--when-busy goes with --session (a new session is never busy)");
  const workspace = values.workspace && path.resolve(callerDirectory(io.env, io.cwd ?? process.cwd()), values.workspace);
  if (workspace) {
    const stat = statSync(workspace, { throwIfNoEntry: false });
    const where = workspace === values.workspace ? "" : ` (looked for ${workspace})`;
    if (!stat) throw new UsageError(`--workspace ${values.workspace}: no such directory${where}`);
    if (!stat.isDirectory())
      throw new UsageError(`--workspace ${values.workspace}: not a directory (give the project's directory; it is packed for you)`);
  }
  const json = values.json === true;
  const color = io.stdout.isTTY === true && io.env.NO_COLOR === undefined;
  const progress = new RunProgress({ stdout: io.stdout, stderr: io.stderr, color, spinner: io.stderr.isTTY === true && !json });
  /** A line for the user before the run starts; under --json a script gets what it needs from `emit`. @param {string} line */
  const note = (line) => (json ? undefined : progress.note(line));
  /**
   * Under --json, one of the client's own lines (what it packed, uploaded, opened), among the run's
   * events: it has a `type` no event has, and no `seq`. @param {Record<string, unknown>} line
   */
  const emit = (line) => {
    if (json) io.stdout.write(`${JSON.stringify(line)}\n`);
  };

  const setup = await setUp(api, values, text, workspace, { io, note, emit });
  if (setup === null) return 130;
  const { sessionId, hasWorkspace, newSession } = setup;

  const prompt = {
    text,
    allowWrite: values["allow-write"],
    allowBash: values["allow-bash"],
    ...(values.model ? { model: values.model } : {}),
    ...(whenBusy ? { whenBusy } : {}),
  };
  /** @type {Record<string, any> | null} */
  let terminal = null;
  /** The seq of the run's first event: its messages were stored after it (a long session's whole history is megabytes). */
  let firstSeq = null;
  /** The assistant messages of the run this client saw completed: its token usage is theirs. */
  const assistantIds = new Set();
  /**
   * The stream began mid-run (a steer joins the running run live): the run's start, its first tool
   * calls and model calls, were before this client. Known at the run's first event.
   * @type {boolean | null}
   */
  let joined = null;
  /** A tool call that can change files (anything but the read-only tools) ran: the diff is worth showing. */
  let mayHaveWritten = false;
  // Ctrl-C stops the run on the server too (leaving the stream alone does not), and the stream goes
  // on to the run's end; a second Ctrl-C leaves at once.
  let interrupts = 0;
  const runSession = sessionId;
  /**
   * This prompt's run, once the server said (the prompt's answer names it, and its first event):
   * Ctrl-C names it, so it never stops another client's run, nor a run that ended meanwhile.
   * @type {string | null}
   */
  let runId = null;
  /** Its agent_started came: it is the session's active run. */
  let runStarted = false;
  /** Ctrl-C came; the abort is sent once the run is known, and again once it starts if it was queued then. */
  let stopWanted = false;
  let stopSent = false;
  const stopRun = async () => {
    if (!stopWanted || stopSent || runId === null) return;
    stopSent = true;
    const startedBefore = runStarted;
    const outcome = await abortRun(api, runSession, runId);
    if (typeof outcome === "string") {
      io.stderr.write(`could not stop the run: ${visible(outcome)}; it goes on: stop it with pi-harness abort ${runSession}\n`);
    } else if (!outcome.aborted && !startedBefore) {
      // Not active yet (a follow-up waiting its turn): stopped when it starts.
      stopSent = false;
      if (runStarted) void stopRun();
    }
  };
  const unsubscribe = (io.onInterrupt ?? onSigint)(() => {
    if (++interrupts > 1) return (io.exit ?? process.exit)(130);
    io.stderr.write("stopping the run (Ctrl-C again to leave without waiting)\n");
    stopWanted = true;
    void stopRun();
  });
  try {
    const events = followRun(api, sessionId, prompt, {
      onReconnect: (info) => progress.reconnecting(info),
      onRunId: (id) => {
        runId ??= id;
        void stopRun();
      },
      reconnectDelayMs: io.reconnectDelayMs,
    });
    for await (const event of events) {
      if (json) io.stdout.write(`${JSON.stringify(event)}\n`);
      else progress.event(event);
      firstSeq ??= event.seq;
      if (joined === null && !QUEUE_EVENTS.has(event.type)) joined = event.type !== "agent_started";
      if (event.type === "agent_started") {
        runId ??= event.runId;
        if (event.runId === runId) runStarted = true;
        void stopRun();
      }
      if (event.type === "assistant_completed") assistantIds.add(event.messageId);
      if (event.type === "tool_call_finished" && !READ_ONLY_TOOLS.has(event.tool)) mayHaveWritten = true;
      if (event.type === "agent_completed" || event.type === "agent_error") terminal = event;
    }
  } finally {
    unsubscribe();
    progress.stop();
  }
  // Stopped by the user: the shell's code for Ctrl-C, once the run has ended. Stopped by someone
  // else (the abort command, the viewer): not done either.
  const done = terminal?.type === "agent_completed" && terminal.stopReason !== "ABORTED" ? 0 : 1;
  const exitCode = interrupts > 0 ? 130 : done;
  const unfinished = "error: the run's stream ended without its final event\n";
  if (json) {
    if (terminal === null) io.stderr.write(unfinished);
    return exitCode;
  }

  // The run is over: a failure to show its diff or its tokens is told, and the exit code stays the
  // run's (a script that took 1 for a failed run would send the prompt, and its edits, again).
  const p = paint(color);
  const onBusy = busyNote(io);
  try {
    if (hasWorkspace) {
      // The API gives the session's changes, not a run's: a run that changed nothing (no tool call
      // that writes ran, or it could not write) is not shown the earlier runs' edits as its own, and a
      // diff of several runs says so. A joined run's earlier calls and options are not known.
      if (!joined && (!mayHaveWritten || !values["allow-write"])) {
        io.stdout.write(`${p.dim(newSession ? "no changes" : "no changes in this run")}\n`);
      } else {
        const diff = await api.changes(sessionId, { onBusy });
        const title = newSession && !joined ? "changes:" : "the session's changes so far (earlier runs' included):";
        io.stdout.write(diff === "" ? `${p.dim("no changes")}\n` : `${p.bold(title)}\n${colorDiff(diff, p)}`);
      }
    }
    const usage = await usageOfRun(api, sessionId, firstSeq, assistantIds, onBusy);
    const counts = `${usage.inputTokens.toLocaleString("en-US")} in · ${usage.outputTokens.toLocaleString("en-US")} out · ${usage.totalTokens.toLocaleString("en-US")} total (${usage.calls} model call${usage.calls === 1 ? "" : "s"})`;
    io.stdout.write(`${p.dim(joined ? `tokens since this client joined the run (it began before): ${counts}` : `tokens: ${counts}`)}\n`);
  } catch (err) {
    const why = err instanceof ApiError ? `${err.code}: ${err.message}` : err instanceof Error ? err.message : String(err);
    io.stderr.write(
      `warning: the run has ended, but its changes or tokens could not be read (${visible(why)}); pi-harness changes ${sessionId} shows its changes\n`,
    );
  }
  if (terminal === null) {
    io.stderr.write(unfinished);
    return 1;
  }
  return exitCode;
}

/** The queue's events, which a stream starts with before a run's own (a prompt sent while the session is busy). */
const QUEUE_EVENTS = new Set(["message_queued", "queue_updated", "queued_message_withdrawn"]);
/** The tools that never change a file; any other may (bash with --allow-write, write, edit). */
const READ_ONLY_TOOLS = new Set(["read", "ls", "grep", "find"]);

/**
 * Everything before the prompt: packs and uploads the workspace and opens a session, or reads the
 * session given. Ctrl-C here stops before the next step (a second one leaves at once) and names what
 * was created, for the user to continue or delete (nothing is deleted for them); resolves to null then.
 * @param {HarnessApi} api
 * @param {Record<string, any>} values
 * @param {string} text
 * @param {string | undefined} workspace
 * @param {{ io: Io; note: (line: string) => void; emit: (line: Record<string, unknown>) => void }} out
 * @returns {Promise<{ sessionId: string; hasWorkspace: boolean; newSession: boolean } | null>}
 */
async function setUp(api, values, text, workspace, { io, note, emit }) {
  /** @type {{ workspaceId: string | null; sessionId: string | null }} */
  const created = { workspaceId: null, sessionId: null };
  /** The request whose outcome is not known yet, while one is out. @type {"upload" | "session" | null} */
  let underWay = null;
  let interrupted = false;
  /** @param {boolean} leaving Ctrl-C again: the request under way is left to itself */
  const report = (leaving) => {
    const pending = leaving ? underWay : null;
    emit({ type: "interrupted", promptSent: false, created: { ...created }, underWay: pending });
    io.stderr.write(`${leftBehind(created, pending)}\n`);
  };
  const unsubscribe = (io.onInterrupt ?? onSigint)(() => {
    if (interrupted) {
      report(true);
      return (io.exit ?? process.exit)(130);
    }
    interrupted = true;
    io.stderr.write("stopping before the prompt is sent (Ctrl-C again to leave at once)\n");
  });
  const stopped = () => {
    if (interrupted) report(false);
    return interrupted;
  };
  /** @param {string} sessionId @param {string | null} workspaceId @param {boolean} isNew */
  const opened = (sessionId, workspaceId, isNew) => {
    emit({ type: "session", sessionId, workspaceId, created: isNew, viewer: `${api.baseUrl}/#/s/${sessionId}` });
    note(`session ${sessionId}${workspaceId !== null ? "" : " (no workspace)"} · ${api.baseUrl}/#/s/${sessionId}`);
    return stopped() ? null : { sessionId, hasWorkspace: workspaceId !== null, newSession: isNew };
  };
  try {
    if (values.session) {
      const info = await api.session(values.session);
      return opened(values.session, info.workspaceId ?? null, false);
    }
    if (workspace) {
      const packed = await packWorkspace(workspace, {
        includeEnv: values["include-env"],
        includeNodeModules: values["include-node-modules"],
        includeIgnored: values["include-ignored"],
      });
      const skipped =
        packed.skipped.length > 0
          ? `, skipped ${packed.skipped.length} (${packed.skipped.map((s) => `${s.path}: ${s.reason}`).join("; ")})`
          : "";
      note(`packed ${packed.files.length} files (${kib(packed.bytes)} KiB, ${kib(packed.archive.byteLength)} KiB compressed)${skipped}`);
      emit({
        type: "packed",
        files: packed.files.length,
        bytes: packed.bytes,
        archiveBytes: packed.archive.byteLength,
        skipped: packed.skipped,
      });
      if (stopped()) return null;
      underWay = "upload";
      const uploaded = await api.uploadWorkspace(packed.archive, {
        // Waiting, not something a script acts on: on stderr under --json.
        onBusy: (seconds) => {
          const line = `the harness is busy with other uploads; trying again in ${seconds} s`;
          if (values.json === true) io.stderr.write(`${line}\n`);
          else note(line);
        },
      });
      underWay = null;
      created.workspaceId = uploaded.workspaceId;
      emit({
        type: "uploaded",
        workspaceId: uploaded.workspaceId,
        files: uploaded.files,
        bytes: uploaded.bytes,
        skipped: uploaded.skipped,
      });
      if (uploaded.skipped.length > 0)
        note(`the harness skipped ${uploaded.skipped.map((/** @type {any} */ s) => `${s.path} (${s.reason})`).join(", ")}`);
      if (stopped()) return null;
    }
    underWay = "session";
    const session = await api.createSession({
      ...(created.workspaceId ? { workspaceId: created.workspaceId } : {}),
      title: oneLine(text, 80),
    });
    underWay = null;
    created.sessionId = /** @type {string} */ (session.sessionId);
    return opened(created.sessionId, created.workspaceId, true);
  } finally {
    unsubscribe();
  }
}

/**
 * What a run stopped before its prompt leaves on the harness, and the commands to continue or delete it.
 * @param {{ workspaceId: string | null; sessionId: string | null }} created
 * @param {"upload" | "session" | null} underWay a request left without its answer
 */
function leftBehind({ workspaceId, sessionId }, underWay) {
  const w = workspaceId && visible(workspaceId);
  const s = sessionId && visible(sessionId);
  const what = [w && `workspace ${w}`, s && `session ${s}`].filter(Boolean).join(" and ");
  let line = "interrupted before the prompt was sent; ";
  if (s) {
    const deletes = w ? `them with pi-harness delete ${s} && pi-harness delete ${w}` : `it with pi-harness delete ${s}`;
    line += `created ${what}: continue with pi-harness run --session ${s} "PROMPT", or delete ${deletes}`;
  } else if (w) line += `created ${what}: delete it with pi-harness delete ${w}`;
  else line += "nothing was created on the harness";
  if (underWay === "upload") line += "; the upload under way may still store a workspace (pi-harness workspaces lists it)";
  if (underWay === "session") line += "; the session being opened may still be created (pi-harness sessions lists it)";
  return line;
}

/**
 * The token usage of the assistant messages `ids` (those of the run this client saw completed),
 * read from the messages stored since its first event (the whole log if one is not among them).
 * @param {HarnessApi} api
 * @param {string} sessionId
 * @param {number | null} firstSeq
 * @param {Set<string>} ids
 * @param {(waitSeconds: number) => void} [onBusy]
 */
async function usageOfRun(api, sessionId, firstSeq, ids, onBusy) {
  if (ids.size === 0) return usageOf([], ids);
  if (firstSeq !== null) {
    const recent = await api.messages(sessionId, { after: firstSeq - 1 }, { onBusy });
    const stored = new Set(recent.map((m) => m.id));
    if ([...ids].every((id) => stored.has(id))) return usageOf(recent, ids);
  }
  return usageOf(await api.messages(sessionId, {}, { onBusy }), ids);
}

/**
 * The token usage of the assistant messages `ids` among `messages`, summed. A run's are those of its
 * `assistant_completed` events: a steer's user message in the middle of the run does not end it.
 * @param {Record<string, any>[]} messages
 * @param {Set<string>} ids
 */
function usageOf(messages, ids) {
  const total = { inputTokens: 0, outputTokens: 0, totalTokens: 0, calls: 0 };
  for (const m of messages) {
    if (m.kind !== "assistant" || !ids.has(m.id) || !m.usage) continue;
    total.inputTokens += m.usage.inputTokens;
    total.outputTokens += m.usage.outputTokens;
    total.totalTokens += m.usage.totalTokens;
    total.calls++;
  }
  return total;
}

/** Tries of the abort Ctrl-C sends, and the wait between them. */
const ABORT_TRIES = 3;
const ABORT_RETRY_MS = 1000;

/**
 * Aborts the run, again while no answer comes (the connection dropped, a 5xx); resolves to the
 * server's answer, or to why it failed in the end.
 * @param {HarnessApi} api @param {string} sessionId @param {string} runId
 * @returns {Promise<{ aborted: boolean } | string>}
 */
async function abortRun(api, sessionId, runId) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await api.abort(sessionId, runId);
    } catch (err) {
      const unanswered = err instanceof ApiError && (err.status === 0 || err.status >= 500);
      if (!unanswered || attempt >= ABORT_TRIES) return err instanceof Error ? err.message : String(err);
      await new Promise((resolve) => setTimeout(resolve, ABORT_RETRY_MS));
    }
  }
}

/**
 * The token usage of the run that starts at `userMessageId`: its assistant messages' usage summed, up
 * to the next user message (so a run that took a steer is cut there; `run` counts by its events, with
 * `usageOf`). For scripts/demo.mjs, whose replayed run takes none.
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
  const messages = await api.messages(id, {}, { onBusy: busyNote(io) });
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
