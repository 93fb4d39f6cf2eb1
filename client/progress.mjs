// Live progress of a run in a terminal: assistant text as it arrives on stdout, one line per tool
// call (arguments and outcome), and on stderr a spinner while the model thinks, a tool runs or the
// connection is re-established. Without a terminal there is no spinner and no colour.

const SPINNER_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
const SPINNER_INTERVAL_MS = 80;
const ARGS_MAX_CHARS = 100;
const SUMMARY_MAX_CHARS = 100;

/**
 * @typedef {{ write(text: string): unknown; isTTY?: boolean }} Output
 * @typedef {{ bold(s: string): string; dim(s: string): string; red(s: string): string; green(s: string): string; yellow(s: string): string; cyan(s: string): string }} Paint
 */

/** @param {boolean} on @returns {Paint} */
export function paint(on) {
  /** @param {number} open @param {number} close */
  const sgr = (open, close) => (/** @type {string} */ s) => (on ? `\x1b[${open}m${s}\x1b[${close}m` : s);
  return { bold: sgr(1, 22), dim: sgr(2, 22), red: sgr(31, 39), green: sgr(32, 39), yellow: sgr(33, 39), cyan: sgr(36, 39) };
}

/** C0 and C1 controls and DEL (line feed and tab are let through), the bidirectional overrides and isolates. */
const UNSAFE = /[\p{Cc}\u202a-\u202e\u2066-\u2069]/gu;

/**
 * Text from the server (model output, file contents, titles, paths) as a terminal may show it: no
 * escape sequence in it can move the cursor, erase a line, set the window title or write the
 * clipboard. C0 controls show as their Unicode pictures (ESC as ␛), the others as `\uXXXX`;
 * CRLF line ends become LF.
 * @param {string} text
 */
export function visible(text) {
  return text.replace(/\r\n/g, "\n").replace(UNSAFE, (c) => {
    if (c === "\n" || c === "\t") return c;
    const code = c.charCodeAt(0);
    if (code < 0x20) return String.fromCharCode(0x2400 + code);
    return code === 0x7f ? "\u2421" : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** A value shown on one line, cut to `max` characters. @param {unknown} value @param {number} max */
export function oneLine(value, max) {
  const text = visible((typeof value === "string" ? value : JSON.stringify(value)).replace(/\s+/g, " ").trim());
  if (text.length <= max) return text;
  // Never half of a surrogate pair (an emoji): the server refuses a title holding one (hunt 77).
  const end = /[\uD800-\uDBFF]/.test(text[max - 2] ?? "") ? max - 2 : max - 1;
  return `${text.slice(0, end)}…`;
}

export class RunProgress {
  /**
   * @param {{ stdout: Output; stderr: Output; color?: boolean; spinner?: boolean }} io
   */
  constructor({ stdout, stderr, color = false, spinner = false }) {
    this.stdout = stdout;
    this.stderr = stderr;
    this.p = paint(color);
    this.spinnerOn = spinner;
    /** @type {Map<string, { tool: string; arguments: unknown }>} */
    this.calls = new Map();
    this.midLine = false;
    this.status = "";
    this.frame = 0;
    this.drawn = false;
    /** @type {ReturnType<typeof setInterval> | null} */
    this.timer = null;
  }

  /** @param {string} text a line for the user, before the run starts */
  note(text) {
    // Notes name files and echo the server's words: never a terminal escape from either.
    this.print(`${this.p.dim(visible(text))}\n`);
  }

  /** @param {import("./event-stream.mjs").StreamedEvent} event */
  event(event) {
    switch (event.type) {
      case "user_message_appended":
        this.spin("thinking");
        break;
      case "assistant_delta":
        this.spin("");
        this.print(visible(event.text));
        if (event.text !== "") this.midLine = !event.text.endsWith("\n");
        break;
      case "assistant_completed":
        this.endLine();
        if (event.stopReason === "LENGTH") this.print(`${this.p.yellow("(the answer was cut at its length limit)")}\n`);
        if (event.stopReason === "ABORTED") this.print(`${this.p.yellow("(aborted)")}\n`);
        break;
      case "tool_call_started":
        this.calls.set(event.callId, { tool: event.tool, arguments: event.arguments });
        this.spin(`${visible(String(event.tool))} ${oneLine(event.arguments, ARGS_MAX_CHARS)}`);
        break;
      case "tool_call_finished": {
        const call = this.callLine(event);
        const summary = event.summary ? ` ${this.p.dim(`— ${oneLine(event.summary, SUMMARY_MAX_CHARS)}`)}` : "";
        this.print(event.error ? `${this.p.red("✗")} ${call}${summary}\n` : `${this.p.green("✓")} ${call}${summary}\n`);
        this.spin("thinking");
        break;
      }
      case "tool_call_denied":
        this.print(`${this.p.red("⊘")} ${this.callLine(event)} ${this.p.red(`— denied: ${visible(String(event.reason))}`)}\n`);
        this.spin("thinking");
        break;
      case "brief_injected":
        this.print(
          `${this.p.yellow(`(given a Failure Prevention Brief of ${event.caseIds.length} case${event.caseIds.length === 1 ? "" : "s"} from earlier failures)`)}\n`,
        );
        break;
      case "compaction_started":
        this.endLine();
        this.spin(`compacting the history (${event.reason})`);
        break;
      case "compaction_finished":
        this.spin("");
        this.print(`${this.p.dim(`(history compacted: ~${event.tokensBefore} -> ~${event.tokensAfter} tokens)`)}\n`);
        break;
      case "compaction_failed":
        this.spin("");
        this.print(`${this.p.yellow(`(compaction failed: ${visible(String(event.code))})`)}\n`);
        break;
      case "model_retry":
        // Announced by the harness before it waits to retry the model (429, 5xx, dropped connection).
        this.spin(`retrying the model in ${Math.ceil((event.delayMs ?? 0) / 1000)} s (attempt ${event.attempt ?? "?"})`);
        break;
      case "agent_error":
        this.endLine();
        this.spin("");
        this.stderr.write(`${this.p.red(`error: ${visible(`${event.code}: ${event.message}`)}`)}\n`);
        break;
      case "agent_completed":
        this.endLine();
        this.spin("");
        break;
      default:
        break;
    }
  }

  /** @param {import("./event-stream.mjs").ReconnectInfo} info */
  reconnecting(info) {
    // The streamed text is left as it is (no line break), so a resumed answer reads as one.
    // The reason may quote an error page a proxy sent: its control characters are written out (hunt 115).
    const reason = visible(info.reason);
    this.spin(`connection lost (${reason}); reconnecting from event ${info.lastSeq}`);
    if (!this.spinnerOn) this.stderr.write(`reconnecting after event ${info.lastSeq}: ${reason}\n`);
  }

  /** Stops the spinner; call once the run is over. */
  stop() {
    this.spin("");
    this.endLine();
  }

  /** @param {import("./event-stream.mjs").StreamedEvent} event a tool_call_* event */
  callLine(event) {
    const call = this.calls.get(event.callId);
    const tool = call?.tool ?? event.tool ?? "?";
    // A call under way when this client joined the run (a steer's stream starts mid-run): its
    // arguments were in the tool_call_started it never saw, not `{}`.
    const args = call ? oneLine(call.arguments ?? {}, ARGS_MAX_CHARS) : "(started before this client joined the run)";
    return `${this.p.bold(visible(String(tool)))} ${this.p.dim(args)}`;
  }

  endLine() {
    if (this.midLine) this.print("\n");
    this.midLine = false;
  }

  /** @param {string} text */
  print(text) {
    if (text === "") return;
    this.clearSpinner();
    this.stdout.write(text);
    this.drawSpinner();
  }

  /** @param {string} status what to show beside the spinner; "" stops it */
  spin(status) {
    if (!this.spinnerOn) return;
    this.clearSpinner();
    this.status = status;
    if (status === "" && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    } else if (status !== "" && !this.timer) {
      this.timer = setInterval(() => {
        this.frame = (this.frame + 1) % SPINNER_FRAMES.length;
        this.clearSpinner();
        this.drawSpinner();
      }, SPINNER_INTERVAL_MS);
      this.timer.unref?.();
    }
    this.drawSpinner();
  }

  clearSpinner() {
    if (this.drawn) this.stderr.write("\r\x1b[K");
    this.drawn = false;
  }

  drawSpinner() {
    // Only at the start of a line, so clearing it never erases streamed text.
    if (!this.spinnerOn || this.status === "" || this.midLine) return;
    this.drawn = true;
    this.stderr.write(`\r${this.p.cyan(SPINNER_FRAMES[this.frame] ?? "")} ${this.p.dim(oneLine(this.status, 70))}`);
  }
}
