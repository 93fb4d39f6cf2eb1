// The session viewer: a list of the tenant's sessions, and one session as a live timeline with its
// changes. Plain modules, no build step; served by the Worker from public/.
import { ApiError, download, getJson, getLog, getPages, request, token } from "./api.js";
import { renderLearning } from "./learning.js";
import { LiveFeed } from "./live.js";
import { renderDiff, Timeline } from "./timeline.js";

const $ = (id) => document.getElementById(id);
const PAGE_SIZE = 50;

let feed = null;
let timeline = null;
let current = null; // { id, info }
let nextCursor = null;
let moreSessions = null; // the next page of the list while it loads
/** The token prompt while it is shown: every request that got 401 meanwhile waits for its answer. */
let pendingToken = null;
/** The events that announce a stored message (read from /messages once they are stored). */
const MESSAGE_EVENTS = new Set(["user_message_appended", "assistant_completed"]);

/** Runs `work`; a 401 asks for a token and runs it again once one is given. */
async function authed(work) {
  const used = token.get();
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;
    // A token entered since this request was sent is tried before asking again.
    if (pendingToken || token.get() === used) await askForToken(used ? "That token was not accepted." : "");
    return authed(work);
  }
}

/** Shows the token prompt once; every caller gets the same promise, settled when a token is entered. */
function askForToken(problem) {
  pendingToken ??= new Promise((resolve) => {
    const form = $("auth");
    form.hidden = false;
    $("layout").hidden = true;
    $("auth-error").hidden = problem === "";
    $("auth-error").textContent = problem;
    token.clear();
    form.onsubmit = (e) => {
      e.preventDefault();
      token.set($("auth-token").value.trim());
      $("auth-token").value = "";
      form.hidden = true;
      $("layout").hidden = false;
      $("sign-out").hidden = false;
      pendingToken = null;
      resolve();
    };
  });
  return pendingToken;
}

/** List reads one at a time, so a refresh and "more…" never interleave their changes to the list. */
let listWork = Promise.resolve();
const listRead = (work) => {
  const next = listWork.then(work);
  listWork = next.catch(() => {});
  return next;
};
/** How often the list's first page is read again while the page is visible. */
const LIST_REFRESH_MS = 30_000;
let refreshing = null;

/** "more…": one page at a time; a second click while it loads waits for the same page. */
function loadMoreSessions() {
  moreSessions ??= listRead(loadNextPage).finally(() => {
    moreSessions = null;
    $("more-sessions").disabled = false;
  });
  $("more-sessions").disabled = true;
  return moreSessions;
}

async function loadNextPage() {
  if (!nextCursor) return;
  const page = await authed(() => getJson(`/api/sessions?${new URLSearchParams({ limit: String(PAGE_SIZE), cursor: nextCursor })}`));
  const list = $("session-list");
  const listed = new Set([...list.querySelectorAll("a")].map((a) => a.dataset.sessionId));
  // A session the refresh already placed is not listed twice.
  list.append(...page.items.filter((s) => !listed.has(s.id)).map((s) => sessionItem(s)));
  nextCursor = page.nextCursor;
  $("more-sessions").hidden = nextCursor === null;
  markCurrent();
}

/**
 * Reads the list's first page again: sessions made elsewhere join the top, renamed ones change, and
 * ones deleted elsewhere go; the pages "more…" read after it stay. The list is in creation order, so
 * a listed session newer than the last one the page shares with the list and missing from the page
 * was deleted; older ones cannot be told from later pages and stay.
 */
function refreshSessions() {
  refreshing ??= listRead(async () => {
    const page = await authed(() => getJson(`/api/sessions?limit=${PAGE_SIZE}`));
    const list = $("session-list");
    const items = new Map([...list.querySelectorAll("a")].map((a) => [a.dataset.sessionId, a.closest("li")]));
    const onPage = new Set(page.items.map((s) => s.id));
    const listedIds = [...items.keys()];
    const lastShared = listedIds.findLastIndex((id) => onPage.has(id));
    let tail = [];
    if (page.nextCursor === null)
      nextCursor = null; // the page is the whole list
    else if (lastShared === -1)
      nextCursor = page.nextCursor; // nothing listed is on it: start over from it
    else tail = listedIds.slice(lastShared + 1).filter((id) => !onPage.has(id)); // nextCursor still follows the tail
    const next = [...page.items.map((s) => sessionItem(s, items.get(s.id))), ...tail.map((id) => items.get(id))];
    const unchanged = next.length === list.children.length && next.every((li, i) => list.children[i] === li);
    if (!unchanged) list.replaceChildren(...next); // replacing would take the focus from a listed link
    $("more-sessions").hidden = nextCursor === null;
    markCurrent();
    // The open session renamed elsewhere: its heading follows the list, not only the next run's end (hunt 58).
    const open = current?.info ? page.items.find((s) => s.id === current.id) : undefined;
    if (open && open.title !== current.info.title) {
      current.info.title = open.title;
      $("session-title").textContent = open.title || open.id;
    }
  }).finally(() => {
    refreshing = null;
  });
  return refreshing;
}

/** A session's entry in the list; `reuse` is its entry already listed, brought up to date. */
function sessionItem(s, reuse) {
  const li = reuse ?? document.createElement("li");
  if (!reuse) {
    const a = document.createElement("a");
    a.href = `#/s/${s.id}`;
    a.dataset.sessionId = s.id;
    li.append(a, document.createElement("small"));
  }
  const [a, when] = li.children;
  const title = s.title || s.id;
  if (a.textContent !== title) a.textContent = title;
  const created = new Date(s.createdAt).toLocaleString();
  if (when.textContent !== created) when.textContent = created;
  return li;
}

function markCurrent() {
  for (const a of document.querySelectorAll("#session-list a")) a.classList.toggle("current", a.dataset.sessionId === current?.id);
}

const errorText = (err) => (err instanceof ApiError ? `${err.code}: ${err.message}` : String(err));

/** The connection badge, and the feed's note under the session's header (an error answer, say). */
function setConnection(state, note = "") {
  const badge = $("connection");
  badge.dataset.state = state;
  badge.textContent =
    {
      live: "live",
      connecting: "connecting…",
      reconnecting: "reconnecting…",
      idle: "",
      offline: "offline",
      error: "server error",
      deleted: "session deleted",
    }[state] ?? state;
  badge.title = note;
  $("feed-note").textContent = note;
  $("feed-note").hidden = note === "";
}

/** The live feed's state; a deleted session also says so in its header (its feed has stopped). */
function onFeedState(state, note) {
  setConnection(state, note);
  if (state !== "deleted") return;
  $("session").dataset.status = "deleted";
  $("session-meta").textContent = `${current?.id} · deleted: this session no longer exists`;
}

async function openSession(id) {
  feed?.stop();
  feed = null;
  const opening = { id, info: null };
  current = opening;
  if (!document.querySelector(`#session-list a[data-session-id="${id}"]`)) refreshSessions().catch(() => {});
  markCurrent();
  $("empty").hidden = true;
  $("session").hidden = false;
  $("changes").hidden = true;
  $("changes-error").hidden = true;
  $("learning").hidden = true;
  $("feed-note").hidden = true; // the last session's; this one's feed says its own
  // A session opened again reads its cases afresh (their occurrences grow).
  caseReads = new Map();
  timeline = new Timeline($("timeline"), { describeCases: (caseIds) => describeCases(id, caseIds) });
  const read = { messagesThrough: 0, traceThrough: 0, trace: [], attributions: [], attributionsCursor: null };
  reads.set(timeline, read);
  const path = `/api/sessions/${encodeURIComponent(id)}`;
  let info;
  let messages;
  let events;
  try {
    // The messages before the events: every message in this read was announced by an event in the
    // next one, so none shows as unreferenced; events of messages stored after it are caught up below.
    let log;
    [info, log] = await authed(() => Promise.all([getJson(path), getLog(`${path}/messages`)]));
    messages = log.records;
    read.messagesThrough = log.through;
    events = (await authed(() => getLog(`${path}/events`))).records;
  } catch (err) {
    if (current !== opening) return;
    $("session-title").textContent = id;
    $("session-meta").textContent = errorText(err);
    return;
  }
  // A later route (another session, or this one again) took over while this one loaded.
  if (current !== opening) return;
  current.info = info;
  showInfo(info);
  for (const m of messages) timeline.messages.set(m.id, m);
  // Built a batch per task: one task for 10,000 messages held the tab for 3 s (hunt 106).
  const built =
    (await inBatches(timeline.unreferenced(messages, events), (m) => timeline.showMessage(m), opening)) &&
    (await inBatches(events, (event) => timeline.apply(event), opening)) &&
    (await inBatches(messages, (m) => timeline.setMessage(m), opening));
  if (!built) return;
  timeline.showStaleUsage();
  await Promise.all([refreshChanges(), refreshLearning()]);
  if (current !== opening) return;
  const view = timeline;
  const live = new LiveFeed(id, {
    lastSeq: events.at(-1)?.seq ?? 0,
    eventCount: events.length,
    onEvent: (event) => onLiveEvent(view, event),
    // A feed the page has left may still be finishing a request: only the current one sets the badge.
    onState: (state, note) => feed === live && onFeedState(state, note),
    call: authed,
  });
  feed = live;
  feed.start(info.status === "running");
  // A run that ended between the two reads: its events are here, its messages not yet.
  if (events.some((e) => MESSAGE_EVENTS.has(e.type) && !view.messages.has(e.messageId))) scheduleRefresh(view);
}

/** Entries a task builds before the page gets a turn to draw and answer. */
const BUILD_BATCH = 200;

/**
 * Calls `build` on each item, `BUILD_BATCH` at a time with a task boundary between batches; false
 * when another route took over meanwhile (the rest is not built).
 */
async function inBatches(items, build, opening) {
  for (let i = 0; i < items.length; i++) {
    build(items[i]);
    if (i % BUILD_BATCH === BUILD_BATCH - 1 && i + 1 < items.length) {
      await new Promise((resolve) => setTimeout(resolve, 0));
      if (current !== opening) return false;
    }
  }
  return true;
}

function showInfo(info) {
  $("session-title").textContent = info.title || info.id;
  $("session-meta").textContent =
    `${info.id} · ${info.status} · ${info.counts.messages} messages · ${info.workspaceId ? `workspace ${info.workspaceId}` : "no workspace"} · created ${new Date(info.createdAt).toLocaleString()}`;
  $("session").dataset.status = info.status;
}

/** A live event: shown at once; the messages it implies are read once they are stored. */
function onLiveEvent(view, event) {
  if (view !== timeline) return;
  view.apply(event);
  if (MESSAGE_EVENTS.has(event.type) || event.type === "agent_completed" || event.type === "agent_error") scheduleRefresh(view);
  if (event.type === "agent_completed" || event.type === "agent_error") {
    refreshChanges();
    refreshInfo();
    refreshLearning();
  }
}

/**
 * What the page has read of each timeline's session log, so later reads ask only for what came since
 * (`?after=`): a long session's whole history is megabytes, and a run adds a few records. Attributions
 * come in pages (`?cursor=`): the next read starts at the last page read.
 * @type {WeakMap<Timeline, { messagesThrough: number; traceThrough: number; trace: object[]; attributions: object[]; attributionsCursor: string | null }>}
 */
const reads = new WeakMap();

let refreshTimer = null;
function scheduleRefresh(view) {
  const id = current.id;
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(async () => {
    const read = reads.get(view);
    if (!read) return;
    try {
      const { records, through } = await authed(() => getLog(`/api/sessions/${encodeURIComponent(id)}/messages`, read.messagesThrough));
      if (view !== timeline) return;
      read.messagesThrough = Math.max(read.messagesThrough, through);
      // Stored messages never change: only the new ones need showing (two reads may overlap).
      for (const m of records) if (!view.messages.has(m.id)) view.setMessage(m);
      view.showStaleUsage();
    } catch {
      // shown on the next refresh
    }
  }, 100);
}

async function refreshInfo() {
  const id = current?.id;
  try {
    const info = await authed(() => getJson(`/api/sessions/${encodeURIComponent(id)}`));
    if (current?.id === id) showInfo(info);
  } catch {
    // keep what is shown
  }
}

async function refreshChanges() {
  const id = current?.id;
  if (!current?.info?.workspaceId) return;
  try {
    const diff = await (await authed(() => download(`/api/sessions/${encodeURIComponent(id)}/changes`))).text();
    if (current?.id !== id) return;
    renderDiff($("diff"), diff);
    $("changes-error").hidden = true;
    $("changes").hidden = diff === "";
  } catch (err) {
    if (current?.id !== id) return;
    // The diff shown before (if any) stays, under the reason it could not be brought up to date.
    $("changes-error").textContent = `The changes could not be shown: ${errorText(err)}`;
    $("changes-error").hidden = false;
    $("changes").hidden = false;
  }
}

/** The session's attributions and trace (the failure-learning loop); hidden when it has none. */
async function refreshLearning() {
  const id = current?.id;
  const view = timeline;
  const read = reads.get(view);
  if (!read) return;
  const path = `/api/sessions/${encodeURIComponent(id)}`;
  try {
    const [{ records, through }, pages] = await authed(() =>
      Promise.all([getLog(`${path}/trace`, read.traceThrough), getPages(`${path}/attributions`, "attributions", read.attributionsCursor)]),
    );
    if (current?.id !== id || view !== timeline) return;
    // Only the records after those held (two reads may overlap, and a page is read again).
    const held = read.trace.at(-1)?.writerSeq ?? 0;
    for (const record of records) if (record.writerSeq > held) read.trace.push(record);
    read.traceThrough = Math.max(read.traceThrough, through);
    const heldAttribution = read.attributions.at(-1)?.writerSeq ?? 0;
    for (const attribution of pages.items) if (attribution.writerSeq > heldAttribution) read.attributions.push(attribution);
    read.attributionsCursor = pages.cursor;
    renderLearning($("learning"), { trace: read.trace, attributions: read.attributions });
  } catch {
    // a harness without the learning loop, or a read that failed: nothing to show
  }
}

/**
 * The open session's case reads, by project and case id: the briefs of its runs share them (hunt 106:
 * 300 briefed runs read the same 5 cases 1,510 times at once, and the browser refused a hundred).
 * A read that failed is dropped, so the next brief tries again.
 */
let caseReads = new Map();
/** Case reads under way at once, and those waiting for a turn. */
const MAX_CASE_READS = 4;
let caseReadsActive = 0;
const caseReadsWaiting = [];

function readCase(project, caseId) {
  const key = `${project}/${caseId}`;
  let read = caseReads.get(key);
  if (read) return read;
  const reads = caseReads;
  read = new Promise((resolve, reject) => {
    const start = () => {
      caseReadsActive++;
      authed(() => getJson(`/api/projects/${project}/cases/${encodeURIComponent(caseId)}`))
        .then(resolve, reject)
        .finally(() => {
          caseReadsActive--;
          caseReadsWaiting.shift()?.();
        });
    };
    if (caseReadsActive < MAX_CASE_READS) start();
    else caseReadsWaiting.push(start);
  });
  read.catch(() => reads.get(key) === read && reads.delete(key));
  caseReads.set(key, read);
  return read;
}

/** The prevention hints of a brief's cases, from the session's project. */
async function describeCases(sessionId, caseIds) {
  const info = current?.id === sessionId ? current.info : null;
  const project = encodeURIComponent(info?.projectId ?? "p_default");
  return Promise.all(
    caseIds.map(async (caseId) => {
      try {
        const { case: found } = await readCase(project, caseId);
        return `${found.preventionHint} (${caseId}, seen ${found.occurrences}×)`;
      } catch {
        return caseId;
      }
    }),
  );
}

async function sendPrompt(e) {
  e.preventDefault();
  const error = $("prompt-error");
  error.hidden = true;
  const body = { text: $("prompt-text").value, allowWrite: $("allow-write").checked, allowBash: $("allow-bash").checked };
  try {
    const res = await authed(() => request("POST", `/api/sessions/${encodeURIComponent(current.id)}/messages/stream`, { body }));
    // The run does not depend on this response; the live feed shows it (and resumes if the connection drops).
    await res.body?.cancel();
    $("prompt-text").value = "";
    feed?.follow();
  } catch (err) {
    error.hidden = false;
    error.textContent = errorText(err);
  }
}

function route() {
  const match = /^#\/s\/([A-Za-z0-9_-]+)$/.exec(location.hash);
  if (match) openSession(match[1]);
  else {
    feed?.stop();
    feed = null;
    current = null;
    // Reads still under way for the session just left find their view gone and show nothing.
    timeline = null;
    $("session").hidden = true;
    $("empty").hidden = false;
    setConnection("idle");
    markCurrent();
  }
}

$("more-sessions").onclick = loadMoreSessions;
$("prompt").onsubmit = sendPrompt;
$("sign-out").hidden = !token.get();
$("sign-out").onclick = () => {
  token.clear();
  location.reload();
};
window.addEventListener("hashchange", route);
// Sessions made, renamed or deleted elsewhere show without a reload: on a timer while the page is
// seen, at once when it is seen again, and when the network comes back.
setInterval(() => {
  if (document.visibilityState === "visible") refreshSessions().catch(() => {});
}, LIST_REFRESH_MS);
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible") refreshSessions().catch(() => {});
});
window.addEventListener("online", () => refreshSessions().catch(() => {}));
await refreshSessions();
route();
