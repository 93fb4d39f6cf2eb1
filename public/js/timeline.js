// A session as a timeline: one entry per user message, assistant message, tool call and run end,
// each keyed (m:<messageId>, c:<callId>, run:<runId>, end:<runId>), so applying an event or a message
// twice changes nothing. Events drive the order and the live text; messages fill in what events
// do not carry (the user's text, full tool results, token usage). A message belongs to the run whose
// events (between its agent_started and its end) announced it; a run's token usage is summed from its
// own messages, and only for the runs whose messages changed.

/** Arguments or results longer than this start collapsed. */
const COLLAPSE_CHARS = 240;
const COLLAPSE_LINES = 6;

const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

/**
 * `text` with its invisible format characters (bidi overrides and isolates, zero-width spaces and
 * joiners, the BOM) written out as `<U+202E>`: in a file name, a command or a tool's output they
 * could make what ran read as something else (`run\u202egnp.sh` as `runhs.png`). The server
 * quotes them so in diffs and briefs; tool calls, results and trace lines show them here.
 */
export const visible = (text) => text.replace(/\p{Cf}/gu, (c) => `<U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}>`);

/** A block that starts collapsed when its text is long; its text with format characters visible. */
function collapsible(label, text) {
  const details = el("details", "block");
  details.open = text.length <= COLLAPSE_CHARS && text.split("\n").length <= COLLAPSE_LINES;
  details.append(el("summary", "", label), el("pre", "", visible(text)));
  return details;
}

/** One formatter for every count: toLocaleString builds a new one at each call. */
const count = new Intl.NumberFormat("en-US");
const formatTokens = (usage) =>
  `${count.format(usage.inputTokens)} in · ${count.format(usage.outputTokens)} out · ${count.format(usage.totalTokens)} total`;

const QUEUE_MODES = { steer: "to steer", followUp: "as a follow-up" };
const WITHDRAWN_BECAUSE = { withdrawn_by_client: "by the client", previous_run_failed: "because the run before it failed" };

export class Timeline {
  /**
   * @param {HTMLOListElement} list
   * @param {{ describeCases?: (caseIds: string[]) => Promise<string[]> }} [hooks] the prevention hints of a brief's cases
   */
  constructor(list, hooks = {}) {
    this.list = list;
    this.hooks = hooks;
    list.replaceChildren();
    /** @type {Map<string, HTMLLIElement>} */
    this.entries = new Map();
    /** @type {Map<string, object>} messages by id */
    this.messages = new Map();
    /** @type {Map<string, { messageIds: Set<string>; ended: boolean }>} */
    this.runs = new Map();
    /** @type {Map<string, string>} the run each user and assistant message was announced in */
    this.runOf = new Map();
    /** The run between its agent_started and its end, or null. */
    this.currentRun = null;
    /** Ended runs whose messages changed since their usage was last shown. */
    this.staleUsage = new Set();
    /** @type {Map<Node, string>} streamed text waiting for the next frame (appendText) */
    this.pendingText = new Map();
    /** @type {Map<string, string>} per tool call id: the assistant message that first made a call of it, the latest entry key given it, */
    this.callOwners = new Map();
    this.callKeys = new Map();
    /** @type {Map<string, string>} and per tool result message, the entry key it was shown in */
    this.resultKeys = new Map();
  }

  /** The entry for `key`, created at the end of the list the first time. */
  entry(key, kind) {
    let li = this.entries.get(key);
    if (!li) {
      li = el("li", `entry ${kind}`);
      li.dataset.key = key;
      li.dataset.kind = kind;
      this.entries.set(key, li);
      this.list.append(li);
    }
    return li;
  }

  /** Messages no event refers to (an imported conversation, say) are shown from the messages alone. */
  /** The messages no event announces (imported ones, or older than the events kept): shown from the messages alone. */
  unreferenced(messages, events) {
    const referenced = new Set(events.map((e) => e.messageId).filter(Boolean));
    const calls = new Set(events.map((e) => e.callId).filter(Boolean));
    return messages.filter((m) => !(m.kind === "tool_result" ? calls.has(m.toolCallId) : referenced.has(m.id)));
  }

  showMessage(m) {
    if (m.kind === "user") this.userEntry(m.id);
    if (m.kind === "assistant") {
      this.assistantEntry(m.id);
      for (const call of m.toolCalls ?? []) this.toolEntryAt(this.messageCallKey(call.id, m.id), call.name, call.arguments);
    }
    this.setMessage(m);
  }

  /** Adds or refreshes a stored message: fills in the entries that show it. */
  setMessage(m) {
    this.messages.set(m.id, m);
    if (m.kind === "user" && this.entries.has(`m:${m.id}`)) this.entries.get(`m:${m.id}`).querySelector(".text").textContent = m.text;
    if (m.kind === "assistant" && this.entries.has(`m:${m.id}`)) {
      const li = this.entries.get(`m:${m.id}`);
      const text = li.querySelector(".text");
      this.flushText();
      // Streamed text stays as streamed; a message shown without deltas gets its stored text.
      if (li.dataset.streamed !== "true") {
        text.textContent = m.text;
        li.dataset.textFrom = "message";
      }
      li.dataset.empty = String(text.textContent === "");
      if (m.usage) li.querySelector(".usage").textContent = formatTokens(m.usage);
      this.stopReason(li, m.stopReason);
    }
    if (m.kind === "tool_result") {
      // The call it answers: the latest one shown with its id when it first came (see messageCallKey).
      let key = this.resultKeys.get(m.id);
      if (key === undefined) {
        key = this.callKeys.get(m.toolCallId) ?? `c:${m.toolCallId}`;
        this.resultKeys.set(m.id, key);
      }
      const li = this.entries.get(key) ?? this.toolEntryAt(key, m.toolName, undefined);
      if (li.dataset.status === "running" || li.dataset.status === "pending") li.dataset.status = m.error ? "error" : "ok";
      const result = li.querySelector(".result");
      if (!result.dataset.full && li.dataset.status !== "denied") {
        result.replaceChildren(collapsible(m.error ? "error" : "result", m.resultText));
        result.dataset.full = "true";
      }
    }
    this.markUsageStale(m.id);
  }

  /** Shows the usage of the runs whose messages changed: once after a batch of setMessage. */
  showStaleUsage() {
    for (const runId of this.staleUsage) this.runUsage(runId);
    this.staleUsage.clear();
  }

  markUsageStale(messageId) {
    const runId = this.runOf.get(messageId);
    if (runId !== undefined && this.runs.get(runId)?.ended) this.staleUsage.add(runId);
  }

  /** Records that `messageId` was announced by the open run (a steer's message joins the run that took it). */
  claim(messageId) {
    const run = this.runs.get(this.currentRun);
    if (!run || this.runOf.has(messageId)) return;
    this.runOf.set(messageId, this.currentRun);
    run.messageIds.add(messageId);
  }

  /** Applies one event (with its seq). */
  apply(event) {
    switch (event.type) {
      case "agent_started": {
        if (!this.runs.has(event.runId)) this.runs.set(event.runId, { messageIds: new Set(), ended: false });
        this.currentRun = event.runId;
        const li = this.entry(`run:${event.runId}`, "run");
        li.textContent = `run ${event.runId} · ${new Date(event.createdAt).toLocaleString()}`;
        break;
      }
      case "user_message_appended": {
        this.claim(event.messageId);
        this.userEntry(event.messageId);
        break;
      }
      case "assistant_delta": {
        this.claim(event.messageId);
        const li = this.assistantEntry(event.messageId);
        // Its stored text is shown whole already (the message came before its replayed deltas).
        if (li.dataset.textFrom === "message") break;
        li.dataset.streamed = "true";
        this.appendText(li.querySelector(".text"), event.text);
        li.dataset.state = "streaming";
        break;
      }
      case "assistant_completed": {
        this.claim(event.messageId);
        const li = this.assistantEntry(event.messageId);
        li.dataset.state = "done";
        this.stopReason(li, event.stopReason);
        break;
      }
      case "tool_call_started":
        this.toolEntry(event.callId, event.tool, event.arguments).dataset.status = "running";
        break;
      case "tool_call_finished": {
        const li = this.toolEntry(event.callId, event.tool, undefined);
        li.dataset.status = event.error ? "error" : "ok";
        if (event.summary !== undefined && !li.querySelector(".result").dataset.full)
          li.querySelector(".result").textContent = visible(event.summary);
        break;
      }
      case "tool_call_denied": {
        const li = this.toolEntry(event.callId, event.tool, undefined);
        li.dataset.status = "denied";
        li.querySelector(".result").textContent = `denied: ${event.reason}`;
        break;
      }
      case "agent_error":
      case "agent_completed": {
        const run = this.runs.get(event.runId) ?? { messageIds: new Set(), ended: true };
        run.ended = true;
        this.runs.set(event.runId, run);
        if (this.currentRun === event.runId) this.currentRun = null;
        const li = this.entry(`end:${event.runId}`, event.type === "agent_error" ? "run-error" : "run-end");
        li.replaceChildren();
        // A provider's words may carry format characters too.
        if (event.type === "agent_error")
          li.append(el("strong", "", `agent_error ${event.code}`), el("span", "", ` ${visible(event.message)}`));
        else li.append(el("span", "", `completed (${event.stopReason})`));
        li.append(el("span", "usage"));
        this.runUsage(event.runId);
        break;
      }
      case "brief_injected": {
        // The run was given a Failure Prevention Brief: the lessons of earlier failures it matched.
        const li = this.entry(`brief:${event.runId}`, "brief");
        if (!li.firstChild) {
          li.append(el("strong", "", `Failure Prevention Brief: ${event.caseIds.length} case${event.caseIds.length === 1 ? "" : "s"}`));
          const hints = el("ul", "hints");
          for (const id of event.caseIds) hints.append(el("li", "", id));
          li.append(hints);
          // The words the run was given, as its system prompt held them (events logged before they were kept have none).
          if (typeof event.text === "string") {
            const given = el("details", "brief-text");
            given.append(el("summary", "", "as the run was given it"), el("pre", "", event.text));
            li.append(given);
          }
          this.hooks.describeCases?.(event.caseIds).then(
            (texts) => {
              for (const [i, text] of texts.entries()) if (hints.children[i]) hints.children[i].textContent = text;
            },
            () => {},
          );
        }
        break;
      }
      case "thinking_delta":
        // Reasoning text is kept on the assistant message as `thinking`; the timeline shows answers only.
        break;
      case "compaction_started":
      case "compaction_finished":
      case "compaction_failed": {
        // The older history was (or could not be) summarised; the log itself keeps every message. A
        // compaction inside a run is one of its model calls: its record's usage counts toward the run's.
        if (event.type === "compaction_finished") this.claim(event.messageId);
        const li = this.entry(`e:${event.seq}`, "other");
        li.textContent =
          event.type === "compaction_started"
            ? `compacting the history (${event.reason})`
            : event.type === "compaction_finished"
              ? `history compacted: ~${event.tokensBefore} -> ~${event.tokensAfter} tokens`
              : `compaction failed: ${event.code}`;
        break;
      }
      case "message_queued":
        this.note(event, `prompt queued ${QUEUE_MODES[event.mode] ?? event.mode} (run ${event.runId})`);
        break;
      case "queued_message_withdrawn":
        this.note(event, `queued prompt withdrawn ${WITHDRAWN_BECAUSE[event.reason] ?? event.reason} (run ${event.runId})`);
        break;
      case "model_retry":
        this.note(
          event,
          `model call failed (${event.code}), attempt ${event.attempt} of ${event.maxAttempts}: retrying in ${event.delayMs / 1000} s`,
        );
        break;
      case "queue_updated":
        // The queue after a change: message_queued, user_message_appended and the withdrawals already say it.
        break;
      default: {
        // Event types this viewer does not know yet are shown plainly rather than dropped.
        const li = this.entry(`e:${event.seq}`, "other");
        li.textContent = `${event.type} ${JSON.stringify(event)}`;
      }
    }
  }

  /**
   * Adds streamed text to `node` once per frame, as one text node: `textContent +=` per delta copied
   * (and laid out) the whole text so far each time, which froze the page for seconds on a long
   * answer (1 M characters in 3,900 deltas: 5 s without a frame; 2 M: 30 s).
   */
  appendText(node, text) {
    const pending = this.pendingText.get(node);
    if (pending !== undefined) {
      this.pendingText.set(node, pending + text);
      return;
    }
    this.pendingText.set(node, text);
    if (this.pendingText.size === 1) requestAnimationFrame(() => this.flushText());
  }

  /** Writes the text held for the next frame (also before anything reads an entry's text). */
  flushText() {
    for (const [node, text] of this.pendingText) node.append(text);
    this.pendingText.clear();
  }

  /** A one-line entry for an event that changes no message. */
  note(event, text) {
    this.entry(`e:${event.seq}`, "other").textContent = text;
  }

  userEntry(id) {
    const li = this.entry(`m:${id}`, "user");
    if (!li.firstChild) li.append(el("div", "text", this.messages.get(id)?.text ?? "…"));
    return li;
  }

  assistantEntry(id) {
    const li = this.entry(`m:${id}`, "assistant");
    if (li.firstChild) return li;
    li.append(el("div", "text"), el("div", "footer"), el("span", "usage"));
    // Its stored message may have come before its events (a refresh that overtook a slow stream).
    const stored = this.messages.get(id);
    if (stored) this.setMessage(stored);
    return li;
  }

  /**
   * The entry key of a call an assistant message makes: `c:<id>`, or its own when an earlier message
   * made a call of that id (a model that numbers its calls from call_0 each turn, in an imported
   * history: the runtime renames such calls, an import keeps them), so the later call is not hidden.
   */
  messageCallKey(callId, assistantId) {
    const owner = this.callOwners.get(callId) ?? assistantId;
    this.callOwners.set(callId, owner);
    const key = owner === assistantId ? `c:${callId}` : `c:${callId}@${assistantId}`;
    this.callKeys.set(callId, key);
    return key;
  }

  toolEntry(callId, tool, args) {
    return this.toolEntryAt(`c:${callId}`, tool, args);
  }

  toolEntryAt(key, tool, args) {
    const li = this.entry(key, "tool");
    if (!li.firstChild) {
      li.dataset.status = "pending";
      li.append(el("div", "tool-head", visible(tool ?? "tool")), el("div", "args"), el("div", "result"));
    }
    const argsBox = li.querySelector(".args");
    if (args !== undefined && !argsBox.firstChild) argsBox.append(collapsible("arguments", JSON.stringify(args, null, 2)));
    return li;
  }

  stopReason(li, stopReason) {
    if (stopReason === "STOP" || stopReason === "TOOL_CALLS" || !stopReason) return;
    li.dataset.stopReason = stopReason;
    li.querySelector(".footer").textContent = stopReason;
  }

  /** The tokens of a run: the usage of its assistant messages, summed. */
  runUsage(runId) {
    const run = this.runs.get(runId);
    const usage = this.entries.get(`end:${runId}`)?.querySelector(".usage");
    if (!run || !usage) return;
    const total = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    let calls = 0;
    for (const id of run.messageIds) {
      const m = this.messages.get(id);
      if ((m?.kind !== "assistant" && m?.kind !== "compaction") || !m.usage) continue;
      total.inputTokens += m.usage.inputTokens;
      total.outputTokens += m.usage.outputTokens;
      total.totalTokens += m.usage.totalTokens;
      calls++;
    }
    const text = calls > 0 ? ` · tokens ${formatTokens(total)} (${calls} model call${calls === 1 ? "" : "s"})` : "";
    if (usage.textContent !== text) usage.textContent = text;
  }
}

const lineKind = (line) =>
  /^(diff |index |--- |\+\+\+ )/.test(line)
    ? "meta"
    : line.startsWith("@@")
      ? "hunk"
      : line.startsWith("+")
        ? "add"
        : line.startsWith("-")
          ? "del"
          : "context";

/**
 * A unified diff as a <pre> with one span per line, coloured by kind. Appended one by one: a diff
 * can have more lines than a call can take arguments.
 */
/**
 * Lines of a diff the panel shows: one element a line, built at once, froze the tab for 7 s at
 * 600,000 lines (hunt 68); the rest is counted, and `/changes` gives the whole diff.
 */
export const DIFF_MAX_LINES = 50_000;

export function renderDiff(pre, diff) {
  const lines = document.createDocumentFragment();
  const all = diff.split("\n");
  for (const line of all.slice(0, DIFF_MAX_LINES)) lines.append(el("span", `line ${lineKind(line)}`, `${line}\n`));
  if (all.length > DIFF_MAX_LINES)
    lines.append(
      el(
        "span",
        "line note",
        `[${count.format(all.length - DIFF_MAX_LINES)} more lines not shown: GET /api/sessions/<id>/changes gives the whole diff]\n`,
      ),
    );
  pre.replaceChildren(lines);
}
