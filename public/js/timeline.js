// A session as a timeline: one entry per user message, assistant message, tool call and run end,
// each keyed (m:<messageId>, c:<callId>, run:<runId>, end:<runId>), so applying an event or a message
// twice changes nothing. Events drive the order and the live text; messages fill in what events
// do not carry (the user's text, full tool results, token usage).

/** Arguments or results longer than this start collapsed. */
const COLLAPSE_CHARS = 240;
const COLLAPSE_LINES = 6;

const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

/** A block that starts collapsed when its text is long. */
function collapsible(label, text) {
  const details = el("details", "block");
  details.open = text.length <= COLLAPSE_CHARS && text.split("\n").length <= COLLAPSE_LINES;
  details.append(el("summary", "", label), el("pre", "", text));
  return details;
}

const formatTokens = (usage) =>
  `${usage.inputTokens.toLocaleString("en-US")} in · ${usage.outputTokens.toLocaleString("en-US")} out · ${usage.totalTokens.toLocaleString("en-US")} total`;

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
    /** @type {Map<string, { userMessageId: string | null; ended: boolean }>} */
    this.runs = new Map();
    this.currentRun = null;
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
  showUnreferenced(messages, events) {
    const referenced = new Set(events.map((e) => e.messageId).filter(Boolean));
    const calls = new Set(events.map((e) => e.callId).filter(Boolean));
    for (const m of messages) {
      const shown = m.kind === "tool_result" ? calls.has(m.toolCallId) : referenced.has(m.id);
      if (!shown) this.showMessage(m);
    }
  }

  showMessage(m) {
    if (m.kind === "user") this.userEntry(m.id);
    if (m.kind === "assistant") {
      this.assistantEntry(m.id);
      for (const call of m.toolCalls ?? []) this.toolEntry(call.id, call.name, call.arguments);
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
      // Streamed text stays as streamed; a message shown without deltas gets its stored text.
      if (li.dataset.streamed !== "true") text.textContent = m.text;
      li.dataset.empty = String(text.textContent === "");
      if (m.usage) li.querySelector(".usage").textContent = formatTokens(m.usage);
      this.stopReason(li, m.stopReason);
    }
    if (m.kind === "tool_result") {
      const li = this.entries.get(`c:${m.toolCallId}`) ?? this.toolEntry(m.toolCallId, m.toolName, undefined);
      if (li.dataset.status === "running" || li.dataset.status === "pending") li.dataset.status = m.error ? "error" : "ok";
      const result = li.querySelector(".result");
      if (!result.dataset.full && li.dataset.status !== "denied") {
        result.replaceChildren(collapsible(m.error ? "error" : "result", m.resultText));
        result.dataset.full = "true";
      }
    }
    for (const [runId, run] of this.runs) if (run.ended) this.runUsage(runId);
  }

  /** Applies one event (with its seq). */
  apply(event) {
    switch (event.type) {
      case "agent_started": {
        this.runs.set(event.runId, { userMessageId: null, ended: false });
        this.currentRun = event.runId;
        const li = this.entry(`run:${event.runId}`, "run");
        li.textContent = `run ${event.runId} · ${new Date(event.createdAt).toLocaleString()}`;
        break;
      }
      case "user_message_appended": {
        const run = this.runs.get(this.currentRun);
        if (run && run.userMessageId === null) run.userMessageId = event.messageId;
        this.userEntry(event.messageId);
        break;
      }
      case "assistant_delta": {
        const li = this.assistantEntry(event.messageId);
        li.dataset.streamed = "true";
        li.querySelector(".text").textContent += event.text;
        li.dataset.state = "streaming";
        break;
      }
      case "assistant_completed": {
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
          li.querySelector(".result").textContent = event.summary;
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
        const run = this.runs.get(event.runId) ?? { userMessageId: null, ended: true };
        run.ended = true;
        this.runs.set(event.runId, run);
        const li = this.entry(`end:${event.runId}`, event.type === "agent_error" ? "run-error" : "run-end");
        li.replaceChildren();
        if (event.type === "agent_error") li.append(el("strong", "", `agent_error ${event.code}`), el("span", "", ` ${event.message}`));
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
        // The older history was (or could not be) summarised; the log itself keeps every message.
        const li = this.entry(`e:${event.seq}`, "other");
        li.textContent =
          event.type === "compaction_started"
            ? `compacting the history (${event.reason})`
            : event.type === "compaction_finished"
              ? `history compacted: ~${event.tokensBefore} -> ~${event.tokensAfter} tokens`
              : `compaction failed: ${event.code}`;
        break;
      }
      default: {
        // Event types this viewer does not know yet are shown plainly rather than dropped.
        const li = this.entry(`e:${event.seq}`, "other");
        li.textContent = `${event.type} ${JSON.stringify(event)}`;
      }
    }
  }

  userEntry(id) {
    const li = this.entry(`m:${id}`, "user");
    if (!li.firstChild) li.append(el("div", "text", this.messages.get(id)?.text ?? "…"));
    return li;
  }

  assistantEntry(id) {
    const li = this.entry(`m:${id}`, "assistant");
    if (!li.firstChild) li.append(el("div", "text"), el("div", "footer"), el("span", "usage"));
    return li;
  }

  toolEntry(callId, tool, args) {
    const li = this.entry(`c:${callId}`, "tool");
    if (!li.firstChild) {
      li.dataset.status = "pending";
      li.append(el("div", "tool-head", tool ?? "tool"), el("div", "args"), el("div", "result"));
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
    const li = this.entries.get(`end:${runId}`);
    if (!run || !li || run.userMessageId === null) return;
    const ids = [...this.messages.keys()];
    const total = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
    let calls = 0;
    for (const id of ids.slice(ids.indexOf(run.userMessageId) + 1)) {
      const m = this.messages.get(id);
      if (m.kind === "user") break;
      if (m.kind !== "assistant" || !m.usage) continue;
      total.inputTokens += m.usage.inputTokens;
      total.outputTokens += m.usage.outputTokens;
      total.totalTokens += m.usage.totalTokens;
      calls++;
    }
    if (calls > 0)
      li.querySelector(".usage").textContent = ` · tokens ${formatTokens(total)} (${calls} model call${calls === 1 ? "" : "s"})`;
  }
}

/** A unified diff as a <pre> with one span per line, coloured by kind. */
export function renderDiff(pre, diff) {
  pre.replaceChildren(
    ...diff.split("\n").map((line) => {
      const kind = /^(diff |index |--- |\+\+\+ )/.test(line)
        ? "meta"
        : line.startsWith("@@")
          ? "hunk"
          : line.startsWith("+")
            ? "add"
            : line.startsWith("-")
              ? "del"
              : "context";
      return el("span", `line ${kind}`, `${line}\n`);
    }),
  );
}
