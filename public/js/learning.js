// The failure-learning side of a session: its attributions (each failure tied to the actions behind
// it) and its trace (spans, actions, observations, verdicts), read from GET .../attributions and
// GET .../trace. The brief a run was given is shown in the timeline (brief_injected).

import { visible } from "./timeline.js";

const el = (tag, className, text) => {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
};

/** One line per trace record: what happened, in a few words. */
function describe(record, actions) {
  switch (record.type) {
    case "span_start":
      return `▸ ${record.kind} ${record.kind === "turn" ? record.turnId : record.runId}${record.retryOf ? ` (retries ${record.retryOf})` : ""}`;
    case "span_end":
      return `◂ ${record.kind} ${record.kind === "turn" ? record.turnId : record.runId}: ${record.status} (${record.stopReason})`;
    case "action": {
      const paths = [...record.reads.map((p) => `reads ${p}`), ...record.writes.map((p) => `writes ${p}`)].join(", ");
      return `${record.actionId} ${record.actor} ${record.tool} ${record.argsSummary}${paths ? ` · ${paths}` : ""}`;
    }
    case "observation":
      return `${record.status === "ok" ? "✓" : "✗"} ${record.actionId} ${actions.get(record.actionId)?.tool ?? ""}${record.code ? ` ${record.code}` : ""}: ${record.summary}`;
    case "judge_result":
      return `judge ${record.judgeName}${record.builtIn ? " (built in)" : ""}: ${record.result} · ${record.failureKind}${record.detail ? ` · ${record.detail}` : ""}`;
    case "memory_read":
      return `brief read: ${record.caseIds.join(", ")} (${record.briefChars} characters)`;
    case "attribution":
      return `attribution: ${record.classification} · source ${record.sourceActionIds.join(", ") || "none"} (${record.rule})${record.caseId ? ` · case ${record.caseId}` : ""}`;
    default:
      return `${record.type} ${JSON.stringify(record)}`;
  }
}

/** The action an attribution blames, in words. */
function actionText(actionId, actions) {
  const action = actions.get(actionId);
  return action ? visible(`${action.tool} ${action.argsSummary}`) : actionId;
}

/**
 * Renders both panels into `section`; hides it when the session has no trace.
 * @param {HTMLElement} section
 * @param {{ trace: object[]; attributions: object[] }} data
 */
export function renderLearning(section, { trace, attributions }) {
  const actions = new Map(trace.filter((r) => r.type === "action").map((r) => [r.actionId, r]));
  section.hidden = trace.length === 0 && attributions.length === 0;

  section.querySelector("#attributions-count").textContent = String(attributions.length);
  section.querySelector("#attribution-list").replaceChildren(listOf(attributions, (a) => attributionItem(a, actions)));

  const runs = new Map();
  for (const record of trace) {
    if (!runs.has(record.runId)) runs.set(record.runId, []);
    runs.get(record.runId).push(record);
  }
  const list = section.querySelector("#trace-list");
  // Rebuilt at every run end: the runs the reader opened stay open.
  const open = new Set([...list.querySelectorAll("details.trace-run[open]")].map((d) => d.dataset.runId));
  section.querySelector("#trace-count").textContent = String(trace.length);
  list.replaceChildren(listOf(runs, ([runId, records]) => traceRun(runId, records, actions, open.has(runId))));
}

/** The nodes of `items` in one fragment, appended one by one (a spread would cap how many there can be). */
function listOf(items, node) {
  const fragment = document.createDocumentFragment();
  for (const item of items) fragment.append(node(item));
  return fragment;
}

/** One attribution: the failure, its class, and the facts it rests on. */
function attributionItem(a, actions) {
  const li = el("li", "attribution");
  li.dataset.classification = a.classification;
  li.append(el("strong", "", `${a.judgeName}: ${a.failureKind}`), el("span", "badge", a.classification));
  const facts = el("ul", "facts");
  const fact = (label, value) => value && facts.append(el("li", "", `${label}: ${value}`));
  fact("source", a.sourceActionIds.map((id) => actionText(id, actions)).join("; ") || "none");
  fact("chosen by", a.rule);
  fact("verified by", a.verifierActionId && actionText(a.verifierActionId, actions));
  // Paths and refs as the trace writes them: a hidden override cannot disguise a file (hunt 115).
  fact("artifacts", visible(a.artifactRefs.join(", ")));
  fact("brief cases active", a.memoryReadNodeIds.join(", "));
  fact("case", a.caseId);
  li.append(facts);
  return li;
}

/** A run's trace records under one summary line; `open` as the reader left it. */
function traceRun(runId, records, actions, open) {
  const details = el("details", "trace-run");
  details.dataset.runId = runId;
  details.open = open;
  details.append(el("summary", "", `run ${runId} · ${records.length} records`));
  const ol = el("ol", "trace-records");
  for (const record of records) {
    const li = el("li", `trace-${record.type}`, visible(describe(record, actions)));
    li.dataset.traceType = record.type;
    if ((record.type === "observation" && record.status === "error") || (record.type === "judge_result" && record.result === "fail"))
      li.classList.add("failed");
    ol.append(li);
  }
  details.append(ol);
  return details;
}
