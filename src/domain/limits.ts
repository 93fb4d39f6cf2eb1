/**
 * Every limit a client or the model can run into, in one place, so the layers agree (one file-size
 * limit from upload to overlay to tools). `LIMITS_TABLE` renders them for the README, and a test keeps
 * the README's table equal to it.
 */

const KiB = 1024;
const MiB = 1024 * KiB;
const GiB = 1024 * MiB;

// Requests
/** JSON request bodies above this are refused with 413 `body_too_large`. */
export const MAX_JSON_BODY_BYTES = 256 * KiB;
/**
 * Arrays and objects in a JSON body or an imported line nest at most this deep (400 `invalid_body`,
 * `import_invalid`): code that walks a value recursively, `JSON.stringify` included, must not run out of stack.
 */
export const MAX_JSON_DEPTH = 64;
/** Longest prompt, in characters. */
export const MAX_PROMPT_CHARS = 100_000;
/** Longest session title, in characters. */
export const MAX_TITLE_CHARS = 200;
/** Sessions per page of `GET /api/sessions`: the default and the most a client may ask for. */
export const DEFAULT_SESSION_PAGE = 50;
export const MAX_SESSION_PAGE = 200;
/** `GET /api/workspaces` page size: the default and the most a client may ask for. */
export const DEFAULT_WORKSPACE_PAGE = 50;
export const MAX_WORKSPACE_PAGE = 200;
/** An imported conversation (`POST /api/sessions/import`): bytes of JSONL and messages. */
export const MAX_IMPORT_BYTES = 16 * MiB;
export const MAX_IMPORT_MESSAGES = 10_000;
/**
 * What one imported message may carry: an id this long, usage this many tokens per count, a cost
 * this many US dollars (so a session's totals stay exact and finite).
 */
export const MAX_IMPORTED_ID_CHARS = 256;
export const MAX_IMPORTED_TOKENS = 1_000_000_000;
export const MAX_IMPORTED_COST = 1_000_000;
/** How long a stream token lives: the default, and the range a client may ask for, in seconds. */
export const DEFAULT_STREAM_TOKEN_TTL_SECONDS = 5 * 60;
export const MIN_STREAM_TOKEN_TTL_SECONDS = 10;
export const MAX_STREAM_TOKEN_TTL_SECONDS = 60 * 60;
/** A `tool_call_finished` summary: the result's first line, cut to this many characters. */
export const TOOL_SUMMARY_MAX_CHARS = 200;

// Runs
export const DEFAULT_MAX_TURNS = 6;
export const MAX_TURNS_LIMIT = 50;
export const DEFAULT_MAX_TOOL_CALLS = 12;
export const MAX_TOOL_CALLS_LIMIT = 200;
export const DEFAULT_RUN_TIMEOUT_MS = 120_000;
export const MIN_RUN_TIMEOUT_MS = 1_000;
export const MAX_RUN_TIMEOUT_MS = 15 * 60_000;
/**
 * The most one model answer may hold: characters of text, reasoning, tool-call names and arguments.
 * Past it the answer is cut with `output_too_large`. Large outputs are legitimate (a `write` carrying
 * a big file), but the history is resent every turn and lives in the object's memory.
 */
export const MAX_MODEL_OUTPUT_CHARS = 4 * MiB;
/**
 * Bytes of one event of a provider's stream (its lines up to a blank line), or of a JSON answer: an
 * answer within MAX_MODEL_OUTPUT_CHARS fits in one, each character escaped as `\uXXXX`. Past it the
 * answer is cut with `output_too_large` at once: parsing a 40 MB line held the isolate for 20 s
 * (hunt 105), a 30 MB event of many lines for 82 s (hunt 108).
 */
export const MAX_PROVIDER_EVENT_BYTES = 6 * MAX_MODEL_OUTPUT_CHARS + 64 * KiB;
/**
 * `.gitignore` rules grep and find apply in one workspace (shallower files first); the rest are not
 * applied, with a notice. A path is tested against the rules of its directories that can match its
 * name (`RuleDispatch`); rules that can match any name are tested on every path: 20,000 of those
 * over 3,000 files took 18 s, 1,000 of them 0.2 s.
 */
export const MAX_GITIGNORE_RULES = 1_000;
/**
 * A tool call's `extra_content` (Gemini's thought signature, a few KB) is kept and sent back up to this
 * many characters of JSON; a larger one is dropped (a cut signature would be refused anyway).
 */
export const MAX_TOOL_CALL_EXTRA_CHARS = 64 * 1024;
/**
 * A tool-call name from the model longer than this is cut to it (and so names no tool): no tool's name
 * is near it, and the call is stored, streamed and sent back to the provider every turn.
 */
export const MAX_TOOL_NAME_CHARS = 128;
/**
 * The most tool calls one model answer may hold; past it the answer is cut with `output_too_large`.
 * Above a run's largest budget (`MAX_TOOL_CALLS_LIMIT`), so one answer can use any budget; below what
 * 4 Mi characters could carry (about 2 million `{}` calls, each answered, logged and judged: 600
 * denied ones held the isolate for 2.8 s).
 */
export const MAX_TOOL_CALLS_PER_ANSWER = 256;
/** The largest record the session log stores, in bytes of JSON (a model answer at its limit fits). */
export const MAX_RECORD_BYTES = 32 * MiB;

// Context and compaction
/** Context window assumed for a model that is neither in the known-model table nor configured (conservative). */
export const DEFAULT_CONTEXT_WINDOW_TOKENS = 32_000;
/** Smallest and largest context window a prompt or MODEL_CONTEXT_WINDOW may set. */
export const MIN_CONTEXT_WINDOW_TOKENS = 1_000;
export const MAX_CONTEXT_WINDOW_TOKENS = 10_000_000;
/** Compaction starts when the estimated request passes the window minus this reserve (room for the answer)... */
export const COMPACTION_RESERVE_TOKENS = 16_384;
/** ...and keeps about this many tokens of the most recent messages word for word. */
export const COMPACTION_KEEP_RECENT_TOKENS = 20_000;
/**
 * In a small window neither may take more than this share of it (a 8,000-token window reserves 2,000
 * and keeps 2,000), so a compacted history always fits.
 */
export const COMPACTION_MAX_WINDOW_SHARE = 0.25;
/**
 * A summary (its file lists included) takes at most this share of the reserve, as pi caps it: a longer
 * answer is cut, or a summary too large for the window would make every later request overflow, and
 * the next summary request carry it again. The provider is not asked for a cap (`max_tokens` and
 * `max_completion_tokens` are each refused by some).
 */
export const COMPACTION_SUMMARY_RESERVE_SHARE = 0.8;
/** One tool result may take at most this share of the window (and never more than the tool output limit). */
export const TOOL_RESULT_MAX_WINDOW_SHARE = 0.2;
/** Longest `instructions` of a manual compaction, in characters. */
export const MAX_COMPACTION_INSTRUCTIONS_CHARS = 4_000;
/** A prompt's `model` name. */
export const MAX_MODEL_NAME_CHARS = 200;
/** A verdict's `runId`, `judgeName` and `sourceActionId`. */
export const MAX_VERDICT_ID_CHARS = 100;
/** A verdict's `artifactRefs`, and the characters of each. */
export const MAX_VERDICT_ARTIFACT_REFS = 100;
export const MAX_ARTIFACT_REF_CHARS = 4096;
/** A verdict's `detail` and an approval's `note`. */
export const MAX_VERDICT_DETAIL_CHARS = 2_000;
/** An approval's `approvedBy`. */
export const MAX_APPROVER_CHARS = 200;
/** The character-based estimate: this many characters make one token. */
export const CHARS_PER_TOKEN = 4;

// Failure learning
/** Largest JSONL body of foreign traces one import takes. */
export const MAX_TRACE_IMPORT_BYTES = 4 * MiB;
/**
 * Refused lines of one import kept in the quarantine with their reasons (its first ones; the import's
 * answer counts them all). A 4 MiB body of `x\n` is two million refused lines: kept whole, they took
 * 411 MB of the project's storage and GET /quarantine failed with 500.
 */
export const MAX_QUARANTINED_LINES_PER_IMPORT = 1_000;
/** Refused lines a project keeps: past it, the oldest imports' lines go (whole imports; the newest stays). */
export const MAX_PROJECT_QUARANTINE_LINES = 10_000;
/** `GET /api/projects/:pid/quarantine` page size: the default and the most a client may ask for. */
export const DEFAULT_QUARANTINE_PAGE = 100;
export const MAX_QUARANTINE_PAGE = 1_000;
/**
 * The JSON of imported trace records a project keeps (normalised, so a terse line takes several times
 * its bytes): the newest imports' records, an import's first ones when it alone is larger; the older
 * imports' records go. Cases are made from an import's records as it runs, never read back from these.
 */
export const MAX_PROJECT_IMPORTED_RECORD_BYTES = 16 * MiB;
/**
 * The longest id an imported trace line may give (runId, actionId, taskId, attemptId, span and turn
 * ids): past it the line is quarantined. A case repeats some of them (taskId twice), so an id must be
 * far below the 2 MB a SQLite row holds (hunt 53: one 2.2 MB taskId failed a whole import with 500).
 */
export const MAX_TRACE_ID_CHARS = 500;
/**
 * The JSON of one imported record, normalised, as it is stored (one SQLite row, at most 2 MB): a line
 * whose record is larger is quarantined. A backstop: the limits on each field keep typical lines far below.
 */
export const MAX_IMPORTED_TRACE_RECORD_BYTES = 1 * MiB;
/**
 * What one attribution holds, the harness's own and an imported one alike: at most this many action
 * ids per list (a run's latest touching actions), artifact refs (as many as an imported judge result
 * names, each at most a path long), evidence refs (each at most MAX_EVIDENCE_REF_CHARS) and case ids of
 * the briefs its run was given (the newest; a case keeps the newest as many of all its runs).
 */
export const MAX_ATTRIBUTION_ACTION_IDS = 1_000;
export const MAX_TRACE_ARTIFACT_REFS = 200;
export const MAX_EVIDENCE_REFS = 20;
export const MAX_EVIDENCE_REF_CHARS = 1_000;
export const MAX_CASE_MEMORY_READS = 20;
/**
 * The JSON of one case. Its other fields are bounded (ids, hint, evidence and memory reads above), so
 * only its artifact refs can fill it: a case keeps its first ones that fit (at least one). A case that
 * grows when seen again is charged against the project's bound as a new one is.
 */
export const MAX_CASE_BYTES = 256 * KiB;
/**
 * Attributions a project remembers having been handed, so a session's outbox delivering one again
 * (after a restart between delivery and its acknowledgement) does not count it twice. A redelivery
 * follows within an alarm's retry; the oldest are forgotten past this.
 */
export const MAX_PROJECT_ATTRIBUTIONS_REMEMBERED = 10_000;
/**
 * Replay outcomes a project remembers (a run's failure, replayed, that the same judge then passed is
 * flaky when judged again); the oldest are forgotten past this. One comes of each judged replay.
 */
export const MAX_PROJECT_REPLAY_OUTCOMES = 10_000;
/**
 * Cases a project keeps, and the JSON they may take together. A run's brief parses the cases whose
 * paths it names (at worst all of them: 1,000 added ~11 ms to a run under wrangler dev) and the R2
 * mirror rewrites them all in one object (~1 MB for 1,000 typical cases); the byte budget keeps a few
 * cases of hundreds of long paths each from making that a hundred times more. A new case past either
 * evicts the least recently seen one that nothing relies on (awtl/case-bound.ts).
 */
export const MAX_PROJECT_CASES = 1_000;
/** Approvals kept per case, one per approver, the latest (promotion needs one). */
export const MAX_APPROVERS_PER_CASE = 20;
export const MAX_PROJECT_CASE_BYTES = 8 * MiB;
/** `GET /api/projects/:pid/cases` page size: the default and the most a client may ask for. */
export const DEFAULT_CASE_PAGE = 50;
export const MAX_CASE_PAGE = 200;
/** `GET /api/sessions/:id/attributions` page size: the default and the most a client may ask for... */
export const DEFAULT_ATTRIBUTION_PAGE = 100;
export const MAX_ATTRIBUTION_PAGE = 1_000;
/**
 * ...and the most JSON a page holds (one attribution at least, however large). An attribution carries
 * its verdict's artifact refs, up to a request body's worth: an answer of every attribution of a
 * session passed workerd's 32 MiB RPC limit at about 140 such verdicts, a 500 for good (hunt 53).
 */
export const MAX_ATTRIBUTION_PAGE_BYTES = 4 * MiB;
/** The cases one page may hold, in bytes of JSON (a page ends early past it): far below the 32 MiB an RPC answer may take. */
export const MAX_CASE_PAGE_BYTES = 8 * MiB;
/** Most cases one Failure Prevention Brief names... */
export const MAX_BRIEF_CASES = 5;
/** ...and the most characters it may take in the system prompt (header included). */
export const MAX_BRIEF_CHARS = 900;
/** Longest prevention hint of a case (one bullet of a brief); long paths and judge names are shortened to fit. */
export const MAX_PREVENTION_HINT_CHARS = 300;
/** How long a replay's validation of a case holds; older, the case is stale and left out of briefs. */
export const CASE_VALIDATION_MAX_AGE_MS = 30 * 24 * 60 * 60 * 1000;

// Workspaces
/** Largest upload, in bytes. */
export const MAX_ARCHIVE_BYTES = 100 * MiB;
/** Most entries in an archive (files, directories, links, devices: every header). */
export const MAX_ARCHIVE_FILES = 50_000;
/** Largest file anywhere in a workspace: in an upload (bigger ones are skipped), the overlay, `write`, `edit`, `bash`. */
export const MAX_FILE_BYTES = 16 * MiB;
/**
 * Most characters of paths in one snapshot (every entry's name) and in one session's workspace changes
 * (every version's path, replaced ones and deletions included). Paths are held in memory (a snapshot's
 * index, the merged tree, a fork's list of versions): 50,000 entries of 4,096 characters would be 200 Mi
 * characters, past an isolate's 128 MB. 8 Mi is 168 characters a path at 50,000 entries.
 */
export const MAX_WORKSPACE_PATH_CHARS = 8 * MiB;
/** Most replacements in one `edit` call (each is matched against the file as it was before the call). */
export const MAX_EDITS_PER_CALL = 100;
/**
 * Most bytes a session's workspace changes may hold: every file version its runs wrote, the replaced
 * ones included (a fork at an earlier message and `/changes` read them). A write past it fails
 * with `workspace_full`; the object's own storage (10 GB) and its log stay safe.
 */
export const MAX_SESSION_CHANGE_BYTES = 1024 * MiB;
/**
 * File versions a session's workspace changes may hold, replaced ones and deletions included (but
 * not one replaced within its own step): a fork lists them in one RPC answer (32 MiB; about 150
 * bytes each), and shell loops write thousands fast.
 */
export const MAX_SESSION_CHANGE_VERSIONS = 100_000;
/**
 * Most bytes of the directory's key tables (8 bytes a key a shard), which the builder keeps until it
 * writes the directory (encoding a second copy then) and every searching isolate reads whole. Source
 * text needs about 5 % of its size (4.9 MB for 96 MB of node_modules), so this indexes source trees
 * of up to about 240 MB; text of random-looking bytes has more keys than bytes, and 100 MB of it held
 * hundreds of MB (hunt 47). At 24 MiB two ingests at once held 139 MB live (hunt 48). Past it the
 * snapshot is stored without an index: grep scans it, as exact as ever.
 */
export const MAX_SEARCH_DIRECTORY_BYTES = 12 * MiB;
/** Largest file grep searches (bigger ones are named in a notice); the search index and its text cache leave them out. */
export const SEARCH_MAX_FILE_BYTES = 8 * MiB;
/**
 * Most instructions a grep pattern that runs on RE2 may compile to. RE2 keeps up to one thread per
 * instruction alive at each character: 6,015 instructions (`[ab]{1000}` six times) took 2.7 s for
 * one line of 12,000 characters (hunt 89), where the patterns models write compile to 7-106.
 */
export const GREP_RE2_MAX_INSTRUCTIONS = 1000;

/**
 * Most ways items next to each other in a grep pattern (bounded repetitions, optional items,
 * alternatives) may share one stretch of a line and the pattern still run on V8, which tries each
 * before it gives up on a start; past it, the pattern runs on RE2 (hunt 98: 20 of `(?:a|\w)?` in a
 * row held the isolate for 30 s on 4 short lines).
 */
export const GREP_V8_MAX_WAYS = 256;

/**
 * Most repeated items and groups of alternatives a grep pattern may have in a row and still run on
 * V8, whose compile time grows with about the square of such a run (64 took up to 55 ms, 2,340
 * `(ab|cd)` 2 s, and a grep compiles twice); past it, the pattern runs on RE2. Alternatives side by
 * side count as their longest (a list of 66 calls `\bname\s*\(` joined by `|` is 1, hunt 102).
 */
export const GREP_V8_MAX_CHOICES = 64;
/**
 * The longest pattern the grep tool takes, and the longest regular expression the shell's grep
 * takes: the search index's query is built from a pattern in time that grows faster than its length
 * (a literal of 50,000 characters 0.9 s, `[ab]` 100,000 times 5 s, on the isolate's thread), and
 * just-bash reads a regular expression in time quadratic in its length (a 140 KB one held the
 * isolate 38 s, hunt 80). The shell's fixed strings (-F) have no such bound.
 */
export const GREP_MAX_PATTERN_CHARS = 16 * 1024;
/** Most bytes of files in one snapshot. */
export const MAX_TOTAL_BYTES = 512 * MiB;
/** Most bytes an archive may expand to (skipped entries included). */
export const MAX_EXPANDED_BYTES = 1024 * MiB;
/** Uncompressed/compressed ratio above which a gzip stream or zip entry counts as a bomb. */
export const MAX_COMPRESSION_RATIO = 100;
/**
 * Uploads one isolate takes at once (an archive holds about 35 MB live at 100 MB, a conversation
 * import about as much at 16 MiB, and an isolate has 128 MB); trace imports count too. More wait in
 * line, up to this many, for at most this long, before 503 `ingest_busy`.
 */
export const MAX_CONCURRENT_INGESTS = 2;
export const MAX_WAITING_INGESTS = 16;
export const MAX_INGEST_WAIT_MS = 60_000;
/**
 * While an upload holds an ingest slot it must send at least this many bytes in every window of
 * this much time the server spends waiting on it, or it is refused (408 `upload_too_slow`): a
 * stalled or trickling client would otherwise hold one of the isolate's few slots from every
 * other upload for as long as it likes. 64 KiB per 10 s is about 52 kbit/s.
 */
export const UPLOAD_MIN_BYTES_PER_WINDOW = 64 * KiB;
export const UPLOAD_PACE_WINDOW_MS = 10_000;
/**
 * Downloads one session serves at once, of its logs (`GET .../messages`, `/events`, `/trace`), of
 * its changes (`GET .../changes`) and of its attribution pages; more are 429 `too_many_downloads`
 * (with `Retry-After`). A client that reads nothing holds about 6 MB of buffers meanwhile (hunt 48),
 * so sixteen at once filled most of an isolate. A project serves as many pages of its cases at once.
 */
export const MAX_DOWNLOADS_PER_SESSION = 4;
/** A download whose client has read nothing for this long is ended (cut short), freeing its place. */
export const DOWNLOAD_STALL_MS = 60_000;

/** A 503 (a busy server, a flush to retry) or a 429 (too many at once) tells the client when to try again: this many seconds, unless it knows better. */
export const RETRY_AFTER_SECONDS = 5;
/**
 * Downloads of all sessions in one isolate whose clients have read nothing for `SSE_STALL_GRACE_MS`
 * (objects of a class may share an isolate, and each such download holds about 6 MB): when one more
 * stalls, the one stalled longest is cut short, as at `DOWNLOAD_STALL_MS`.
 */
export const MAX_STALLED_DOWNLOADS_PER_ISOLATE = 8;
/**
 * Event streams of one session whose clients have stopped reading (256 KiB or more waiting and
 * nothing read for `SSE_STALL_GRACE_MS`) that it keeps at once; when one more stalls, the one
 * stalled longest is ended with an error and its client resumes from its Last-Event-ID. Such a
 * stream holds about 2 MB (32 unread replays of a large log: +60 MB live, over half an isolate's
 * 128). Streams whose clients read, and those waiting for a queued run, are never ended for this.
 */
export const MAX_STALLED_EVENT_STREAMS_PER_SESSION = 8;
/**
 * Stalled event streams of all sessions in one isolate (objects of a class may share it and its
 * 128 MB): when one more stalls, the one stalled longest anywhere in it is ended, as above.
 */
export const MAX_STALLED_EVENT_STREAMS_PER_ISOLATE = 16;
/** How long a client may read nothing while 256 KiB or more of its event stream wait before the stream counts as stalled. */
export const SSE_STALL_GRACE_MS = 5_000;
/**
 * A stalled event stream is ended after this long, within the bounds above or not: a client that
 * left without its cancel reaching the object (wrangler dev often drops it, hunt 36) would otherwise
 * keep the stream, its queue and its ping timer until the run ends, or for good during a replay.
 */
export const SSE_STALLED_STREAM_MS = 60_000;
/** Longest path inside a workspace, in characters. */
export const MAX_PATH_CHARS = 4096;
/** The most directories a path can go down: each name at least one character and a "/". */
export const MAX_PATH_DEPTH = MAX_PATH_CHARS / 2;
/** Messages a session may hold queued (steer + followUp) at once (409 `queue_full` past it). */
export const MAX_QUEUED_MESSAGES = 100;
/** How long an Idempotency-Key is remembered. */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

// A tenant's storage, so one token cannot fill the operator's (hunt 84: nothing bounded it). Checked
// as a session or workspace is about to be stored; past them, 403 `quota_exceeded`.
/**
 * The most lines a file's diff may add and remove before it is given as a whole replacement (every
 * old line removed, every new one added): `/changes` and the shell's `git diff`. The line diff's time
 * grows with the file's length times this, and without a bound a rewritten 12,000-line file held the
 * isolate for 25 s.
 */
export const MAX_DIFF_EDIT_LINES = 1000;

/** Sessions one tenant keeps at once (deleting one makes room). */
export const MAX_TENANT_SESSIONS = 10_000;
/** Workspaces one tenant keeps at once. */
export const MAX_TENANT_WORKSPACES = 1_000;
/** Source bytes of one tenant's workspaces together: an upload starts only while they are below it. */
export const MAX_TENANT_WORKSPACE_BYTES = 10 * GiB;
/**
 * How long a session or workspace that is being created may stay unlisted before its tenant removes
 * what it stored (a request that died half-way): past any retry's Idempotency-Key, which could still
 * finish it.
 */
export const ABANDONED_CREATION_MS = IDEMPOTENCY_TTL_MS + 60 * 60 * 1000;
/** Longest Idempotency-Key / requestId. */
export const MAX_IDEMPOTENCY_KEY_CHARS = 200;

// Tools
/** Tool output is cut at this many lines... */
export const TOOL_OUTPUT_MAX_LINES = 2000;
/** ...or this many bytes, whichever comes first, with a notice telling the model how to continue. */
export const TOOL_OUTPUT_MAX_BYTES = 50 * KiB;
/** What a tool leaves of the run's per-result budget for the notices after its output (see outputLimit). */
export const NOTICE_ROOM_BYTES = 1024;
export const BASH_DEFAULT_TIMEOUT_MS = 10_000;
export const BASH_MAX_TIMEOUT_MS = 60_000;
/**
 * Regex steps (NFA thread steps, DFA characters) one bash call may take per millisecond of its
 * timeout. Deployed, `Date.now()` stands still inside a step, so this count is what stops a regex step
 * that would outrun the timeout; it is set at about what this machine does in that time at full speed
 * (11-23 million a second in quadratic matches, docs/benchmarks.md), so locally the clock or the count
 * stops such a step near the timeout, whichever comes first.
 */
export const BASH_REGEX_STEPS_PER_MS = 25_000;
/** Bytes one bash command may write in total. */
export const BASH_MAX_WRITTEN_BYTES = 2 * MAX_FILE_BYTES;
/**
 * Bytes of workspace files one bash command may read in total, each read counted (a file named 200
 * times is read 200 times: `wc -l` of 200 operands of 8 MiB took workerd past its heap and killed it,
 * hunt 120).
 */
export const BASH_MAX_READ_BYTES = 32 * 1024 * 1024;
/**
 * Output one bash command may produce, what its redirects write included (just-bash counts both);
 * the shell's output is JS strings held in the isolate. `cp` and `mv` copy bytes and are not output.
 */
export const BASH_MAX_OUTPUT_BYTES_PER_COMMAND = 4 * MiB;
/** Simple commands one call may run, each pass of a loop's body counted: the hardened profile's, fixed. */
export const BASH_MAX_COMMANDS = 10_000;
/**
 * Passes of one loop, numbers one `seq` prints, iterations of an awk, sed or jq loop, and what
 * just-bash counts against the same limits: the records awk reads, the lines `jq -R` reads, the fields
 * or characters `cut` picks. Fixed at the normal profile's 100,000, as many lines as grep handles: the
 * hardened profile's 10,000 failed awk, cut and `jq -R` over any file of 10,001 lines (stop 52). A
 * loop of the shell itself stops sooner, at BASH_MAX_COMMANDS. Stated here, not left to a profile, so
 * the description names it.
 */
export const BASH_MAX_LOOP_ITERATIONS = 100_000;
/**
 * Filesystem operations one traversal (`find`, `grep -r`, `ls -R`, `du`) or one glob's expansion may
 * make: a few for each file of the largest workspace (MAX_ARCHIVE_FILES in the snapshot, up to
 * MAX_SESSION_CHANGE_VERSIONS written). The hardened profile's 100,000 refused `find .` and `grep -r`
 * at 50,000 files; the command's timeout still bounds how long one runs.
 */
export const BASH_MAX_TRAVERSAL_OPERATIONS = 4 * (MAX_ARCHIVE_FILES + MAX_SESSION_CHANGE_VERSIONS);

/** `n` bytes as the README writes them: `256 KiB`, `16 MiB`, `50 KB`... */
function bytes(n: number): string {
  if (n % GiB === 0) return `${n / GiB} GiB`;
  if (n % MiB === 0) return `${n / MiB} MiB`;
  if (n % KiB === 0) return `${n / KiB} KiB`;
  return `${n} bytes`;
}

const count = (n: number) => n.toLocaleString("en-US");

/**
 * The README's section "The bash tool in detail": the `bash` row of the limits table, bound by
 * bound (one bullet each), with what passing it does.
 */
export const BASH_DETAILS: readonly string[] = [
  `No \`diff\`: its work has no bound; \`git diff\` shows a session's edits in the shell, \`GET .../changes\` outside it.`,
  `\`git\` is the shell's own, over the workspace: the workspace as uploaded is HEAD (its files are tracked; nothing is ever staged and there is no history) and the session's changes are the working tree. \`git status\` (\`-s\`, \`--porcelain\`, \`-b\`, \`-u\`, \`--ignored\`), \`git diff\` (\`--stat\`, \`--numstat\`, \`--shortstat\`, \`--name-only\`, \`--name-status\`, \`--quiet\`, \`--exit-code\`, \`HEAD\`, paths, \`*\` patterns and the \`:!\`, \`:(exclude)\` and \`:/\` magic; a path outside the workspace is git's fatal error), \`git ls-files\` (\`-m\`, \`-d\`, \`-o\`, \`--exclude-standard\`, \`-z\`), \`git show HEAD:<path>\`, \`git restore <path>\` or \`git checkout -- <path>\` (a write: refused in a run without writes) and \`git rev-parse\` (\`--show-toplevel\`, \`--show-prefix\`, ...) write what git 2.39 writes, the workspace's \`.gitignore\` files deciding what is ignored; a file with over ${count(MAX_DIFF_EDIT_LINES)} changed lines is shown as one hunk that replaces it whole, and its reads count against the call's ${bytes(BASH_MAX_READ_BYTES)}. Other subcommands (\`log\`, \`add\`, \`commit\`, \`stash\`, ...) exit 1 saying what there is; other revisions than HEAD exit 128.`,
  `A command gets ${BASH_DEFAULT_TIMEOUT_MS / 1000} s by default and at most ${BASH_MAX_TIMEOUT_MS / 1000} s (\`timeoutMs\`). It runs on the isolate's thread: between its file operations other requests get a turn, but work that touches no file, a loop over a string in a variable, holds the isolate and every session on it until it ends or its timeout passes, and counts against the Worker's CPU time.`,
  `A regex step stops at the timeout, inside a match too (a patch of just-bash, \`patches/\`), keeping what it wrote: a global replace, split or match (sed \`s///g\`, awk \`gsub\` and \`split\`, jq \`gsub\`, \`grep -o\`), whose time grows with the square of a line's length where matches can begin everywhere (\`s/(a*b)?a/x/g\` over 3,000 characters of \`a\`: 5 s), one long match, or a \`case\` or \`[[ == ]]\` glob of many \`*\` over a long string (the shell matches globs as regexes).`,
  `Deployed on Cloudflare, where \`Date.now()\` advances only after I/O, the clock cannot see a step's time, and such a step stops instead after ${count(BASH_REGEX_STEPS_PER_MS)} regex steps per millisecond of the timeout (${count(BASH_REGEX_STEPS_PER_MS * BASH_DEFAULT_TIMEOUT_MS)} at the default 10 s, 11 to 22 s of matching on the machine of docs/benchmarks.md).`,
  `Other single steps are not stopped by the timeout but run to their end, the call then ending as timed out (\`bash_timeout\`), and deployed only the Worker's CPU limit bounds them: a sed or awk loop whose passes each rework a large text without a regex (100,000 passes of awk's \`toupper\` over 1 MiB: 27.6 s), and \`sort\` of a large file (\`sort -V\` of 14 MB: 25 s); any other command over a large input runs to its end as well, a few seconds as one call reads at most ${bytes(BASH_MAX_READ_BYTES)} (\`od -c\`, \`tr -d\`, \`cut\`, \`wc -w\` or \`uniq -c\` over 15 MB: 2-4 s in hunt 114).`,
  `A command stopped by its timeout or the run's abort keeps what it wrote (a \`cp -r\` or \`mv\` of a directory what it copied so far, the source whole), and its result shows what it printed until then and names the files it had changed. Appends to a file that is there (\`>>\`, awk's \`print > f\`) wait in memory until the command ends, passes 1 MiB of them or touches that file again, so a restart of the server during the command loses those that wait (its other writes stay).`,
  `A command writes at most ${bytes(BASH_MAX_WRITTEN_BYTES)}, of which at most ${bytes(BASH_MAX_OUTPUT_BYTES_PER_COMMAND)} as command output (what redirects write included; \`cp\` and \`mv\` are not output).`,
  `At most ${count(BASH_MAX_COMMANDS)} commands per call (each pass of a loop body counts) and ${count(BASH_MAX_LOOP_ITERATIONS)} passes of one loop (numbers from \`seq\`, awk, sed and jq loops too; jq counts several steps per pass, over a whole query: \`reduce range(n)\` stops past 24,999), fixed (exit 126, with advice to work in batches).`,
  `One command handles at most 100,000 lines, matches or items (\`grep\`, \`rg\`, \`paste\`, \`column\`, \`xargs\`), records (awk, \`jq -R\`), strings \`strings\` finds, values of a JSON document \`jq\` reads (its members and items: about 1 MB of short records, 4 MB of a \`package-lock.json\`), or fields and characters \`cut\` picks (\`cut -c1-5\`: 20,000 lines), just-bash's own limits (\`grep\` and \`rg\` stop a little sooner: they count the empty piece after a file's last newline as a line, so 99,999 lines, and one unit of work per line and more per match against 100,000, so 98,482 lines when every line matches) (exit 126, with advice to narrow the input first or split it).`,
  `One traversal (\`find\`, \`grep -r\`, \`ls -R\`, a glob) makes at most ${count(BASH_MAX_TRAVERSAL_OPERATIONS)} filesystem operations, enough for the largest workspace, and goes down to the deepest path (${count(MAX_PATH_DEPTH)} directories), except \`grep -r\`, which stops at 256 without a word (just-bash's own depth: \`find . -type f -exec grep ... {} +\` reaches any).`,
  `One string the shell makes (a variable, an expansion) holds at most 10 MiB, but nothing bounds their total: a command that keeps many large variables can pass the isolate's 128 MB, which ends the isolate and every run on it (just-bash has no such budget).`,
  `A directory made by \`mkdir\`, or emptied by \`rm\` or \`mv\`, lasts until the command ends unless a file is written in it; \`chmod\` sets a file's permission bits (it writes the file again, which counts against the session's workspace changes), a directory keeps no mode; \`cp\` and \`mv\` give a new file its source's mode, \`mv\` onto an existing file too, \`cp\` keeps the existing file's; \`/dev/null\` reads empty and keeps nothing (what is written to it still counts as output).`,
  `Text commands (\`sed\`, \`awk\`, \`grep\`, \`tr\`) read a file as UTF-8, so in what they write a byte that is not UTF-8 becomes U+FFFD (\`cat\`, \`cp\`, \`tee\`, \`head -c\` and redirects of what they read keep the bytes; the \`edit\` tool refuses such a file).`,
  `\`printf\` and \`echo -e\` write the bytes of their byte escapes (\`printf '\\303\\251'\` is the two bytes of é, \`printf '\\xff'\` one byte), but a byte that is not UTF-8 text stored in a variable (\`$'\\xe9'\`, \`printf -v\`, \`$(...)\`) becomes the character's two UTF-8 bytes (\`c3 a9\`), and so does one in what a group \`{ ...; }\`, a subshell, a loop, a function, \`xargs\` or \`find -exec\` write (just-bash joins their output as text), so make binary files with \`base64 -d\`, \`cp\`, a plain \`cat ... >\` or a \`printf\` of their own.`,
  `A write goes only into a directory that exists (\`mkdir -p\` first; a redirect that fails ends the call, as a refused one does), a path ending in \`/\` names a directory (\`> a.txt/\`, \`mv a.txt nodir/\` and \`cp b.txt newdir/\` fail as on a disk, and write, rename or make no file), links are refused (\`ln\`), and \`mv\` of a directory onto one holding files is refused.`,
  `\`read\` and \`mapfile\` keep UTF-8 text whole (a patch of just-bash, \`patches/\`), but \`read -n\`/\`-N\` count bytes, not characters; \`grep\` takes its arguments as GNU grep does (every \`-e\`, \`\\+\`, \`\\?\` and \`\\<\` in a basic pattern, \`-ie\`-style clusters, \`-s\`, \`-y\`, \`-NUM\`), \`ls\` of several operands lists them as GNU ls does, a glob ending in \`/\` names directories only, \`tee\` and awk write /dev/stdout and /dev/stderr into the command's own streams, what other commands write to /dev/stderr as a file is shown with its errors, and /dev/stdout written as a file (\`cp f /dev/stdout\`) is refused; where the shell still differs from GNU tools, see [The shell and GNU tools](#the-shell-and-gnu-tools).`,
  `A regular expression given to \`grep\` on its command line is at most ${count(GREP_MAX_PATTERN_CHARS)} characters (exit 2 past it: just-bash reads one in time quadratic in its length; \`-F\` has no bound).`,
  `just-bash matches on an RE2 without RE2's DFA, \`-F\` too, in time that grows with the pattern's length times the line's where a line holds the pattern's first characters over and over (a pattern of 16,384 characters over a 20,000-character line took 9.1 s, 63 \`a\` and a \`b\` over a 1 MB line of \`a\` 5.9 s), and stops at the timeout like any regex step.`,
  `One call reads at most ${bytes(BASH_MAX_READ_BYTES)} of files in all (the workspace's and its own /tmp's), each read of a file counted (a \`head -c\` counts the whole file it opens; a file named twice is read twice); a read past it fails (\`EFBIG\`, which some commands report as a missing file) and the result says so.`,
];

/** The README's limits table: what, and its limit in words. */
export const LIMITS_TABLE: readonly (readonly [string, string])[] = [
  ["JSON request body", `${bytes(MAX_JSON_BODY_BYTES)} (413 \`body_too_large\`)`],
  [
    "JSON nesting (request bodies, imported lines)",
    `${MAX_JSON_DEPTH} levels of arrays and objects (400 \`invalid_body\`, \`import_invalid\`; a trace line past it is quarantined)`,
  ],
  [
    "prompt text",
    `${count(MAX_PROMPT_CHARS)} characters (code points: an emoji is one; an imported user message is counted the same way); a prompt is also a JSON body, at most ${bytes(MAX_JSON_BODY_BYTES)} of UTF-8, so about ${count(Math.floor(MAX_JSON_BODY_BYTES / 3000) * 1000)} characters of CJK text (3 bytes each) or ${count(Math.floor(MAX_JSON_BODY_BYTES / 4000) * 1000)} emoji fit`,
  ],
  ["session title", `${count(MAX_TITLE_CHARS)} characters`],
  [
    "other request fields (400 `invalid_body` past them)",
    `a prompt's \`model\` ${count(MAX_MODEL_NAME_CHARS)} characters; a manual compaction's \`instructions\` ${count(MAX_COMPACTION_INSTRUCTIONS_CHARS)}; a verdict's \`runId\`, \`judgeName\` and \`sourceActionId\` ${count(MAX_VERDICT_ID_CHARS)}, its \`artifactRefs\` ${count(MAX_VERDICT_ARTIFACT_REFS)} of at most ${count(MAX_ARTIFACT_REF_CHARS)} characters, its \`detail\` ${count(MAX_VERDICT_DETAIL_CHARS)}; an approval's \`approvedBy\` ${count(MAX_APPROVER_CHARS)} and \`note\` ${count(MAX_VERDICT_DETAIL_CHARS)}`,
  ],
  ["queued messages (steer + followUp)", `${count(MAX_QUEUED_MESSAGES)} per session (409 \`queue_full\`)`],
  [
    "downloads (`GET .../messages`, `/events`, `/trace`, `/changes`, `/attributions`, and `/files/<path>` of a file the session changed; a project's `GET .../cases`)",
    `${MAX_DOWNLOADS_PER_SESSION} at once per session, and as many pages of cases per project (429 \`too_many_downloads\`, with \`Retry-After\`: ${RETRY_AFTER_SECONDS} s, or, when none of them has been read for ${SSE_STALL_GRACE_MS / 1000} s, the seconds until the first is cut short); one whose client reads nothing for ${DOWNLOAD_STALL_MS / 1000} s is cut short (a client that hangs up holds its place until then when its hang-up does not reach the server, as under \`wrangler dev\`), and so is the one stalled longest when more than ${MAX_STALLED_DOWNLOADS_PER_ISOLATE} of all sessions sharing an isolate have read nothing for ${SSE_STALL_GRACE_MS / 1000} s; a download cut short ends like a complete one (workerd ends a failed body normally), its last line broken off: a last line that does not parse means it was cut, so download again`,
  ],
  [
    `stalled event streams (a prompt's SSE answer, \`GET .../events/stream\`, whose client has read nothing for ${SSE_STALL_GRACE_MS / 1000} s with 256 KiB waiting)`,
    `${MAX_STALLED_EVENT_STREAMS_PER_SESSION} per session and ${MAX_STALLED_EVENT_STREAMS_PER_ISOLATE} per isolate (sessions may share one); when another stalls, the one stalled longest is ended with an error (its client resumes from Last-Event-ID), as is any stream stalled for ${SSE_STALLED_STREAM_MS / 1000} s; streams that are read are not limited`,
  ],
  [
    "Idempotency-Key / requestId",
    `${count(MAX_IDEMPOTENCY_KEY_CHARS)} printable ASCII characters without spaces, remembered ${IDEMPOTENCY_TTL_MS / 3_600_000} h per tenant`,
  ],
  [
    "a tenant's storage",
    `${count(MAX_TENANT_SESSIONS)} sessions and ${count(MAX_TENANT_WORKSPACES)} workspaces at once, and ${bytes(MAX_TENANT_WORKSPACE_BYTES)} of workspace files together (an upload starts only while the tenant holds less, so the one that passes it is kept); past them a new session (created, imported or forked) or upload is 403 \`quota_exceeded\`: delete sessions or workspaces to make room`,
  ],
  ["session list page", `\`limit\` 1-${MAX_SESSION_PAGE} (default ${DEFAULT_SESSION_PAGE})`],
  ["workspace list page", `\`limit\` 1-${MAX_WORKSPACE_PAGE} (default ${DEFAULT_WORKSPACE_PAGE})`],
  [
    "imported conversation",
    `${bytes(MAX_IMPORT_BYTES)} of JSONL, ${count(MAX_IMPORT_MESSAGES)} messages; ids (message, tool call) up to ${MAX_IMPORTED_ID_CHARS} characters, usage up to ${count(MAX_IMPORTED_TOKENS)} tokens per count and a cost up to $${count(MAX_IMPORTED_COST)} per message, user text as a prompt's (not blank, at most ${count(MAX_PROMPT_CHARS)} characters); the size is of the body as sent: every line then gets the new session's id, so the export of an import of a body at the limit can be a little over it`,
  ],
  [
    "stream token lifetime",
    `\`ttlSeconds\` ${MIN_STREAM_TOKEN_TTL_SECONDS}-${count(MAX_STREAM_TOKEN_TTL_SECONDS)} (default ${DEFAULT_STREAM_TOKEN_TTL_SECONDS})`,
  ],
  [
    "run options",
    `\`maxTurns\` 1-${MAX_TURNS_LIMIT} (default ${DEFAULT_MAX_TURNS}), \`maxToolCalls\` 0-${MAX_TOOL_CALLS_LIMIT} (default ${DEFAULT_MAX_TOOL_CALLS}), \`timeoutMs\` ${count(MIN_RUN_TIMEOUT_MS)}-${count(MAX_RUN_TIMEOUT_MS)} (default ${count(DEFAULT_RUN_TIMEOUT_MS)})`,
  ],
  [
    "archive upload",
    `${bytes(MAX_ARCHIVE_BYTES)}, ${count(MAX_ARCHIVE_FILES)} entries whose names add up to at most ${count(MAX_WORKSPACE_PATH_CHARS)} characters, ${bytes(MAX_TOTAL_BYTES)} of files, expanding to at most ${bytes(MAX_EXPANDED_BYTES)}, compression ratio ${MAX_COMPRESSION_RATIO}`,
  ],
  [
    "uploads being taken at once (archives, conversation and trace imports)",
    `${MAX_CONCURRENT_INGESTS} per Worker isolate; up to ${MAX_WAITING_INGESTS} more wait in line for at most ${MAX_INGEST_WAIT_MS / 1000} s, then 503 \`ingest_busy\` (with \`Retry-After\`)`,
  ],
  [
    "an upload's pace while it is taken (archives, conversation and trace imports)",
    `at least ${bytes(UPLOAD_MIN_BYTES_PER_WINDOW)} in every ${UPLOAD_PACE_WINDOW_MS / 1000} s the server waits on its body (408 \`upload_too_slow\`, nothing stored)`,
  ],
  [
    "one file (upload, overlay, `write`, `edit`, `bash`)",
    `${bytes(MAX_FILE_BYTES)} (bigger files in an upload are skipped with \`file_too_large\`)`,
  ],
  [
    "a session's workspace changes",
    `${bytes(MAX_SESSION_CHANGE_BYTES)} of file contents written and ${count(MAX_SESSION_CHANGE_VERSIONS)} file versions whose paths add up to at most ${count(MAX_WORKSPACE_PATH_CHARS)} characters, replaced versions and deletions included (a write or deletion past any of these fails with \`workspace_full\`; deleting a file frees nothing, as a fork at an earlier message still needs it; a version replaced before the session records anything else, as within one shell command, is not kept)`,
  ],
  ["a path", `${count(MAX_PATH_CHARS)} characters (\`path_too_long\`)`],
  ["one `edit` call", `${count(MAX_EDITS_PER_CALL)} replacements in one file`],
  ["a file `grep` searches", `${bytes(SEARCH_MAX_FILE_BYTES)} (larger ones are named in a notice, and left out of the search index)`],
  [
    "a snapshot's search index",
    `its directory at most ${bytes(MAX_SEARCH_DIRECTORY_BYTES)} (about 5 % of source text, so trees of up to about 240 MB; random-looking text fills it far sooner); past it the snapshot is stored without an index and \`grep\` reads every file, with the same results`,
  ],
  [
    "a `grep` pattern",
    `at most ${count(GREP_MAX_PATTERN_CHARS)} characters, literal or not (\`invalid_arguments\` past it: the search index's query is built from it in time that grows faster than its length); ` +
      "first, items that may be absent are dropped from its start and a repeated first item is cut to its least count, which matches the same lines (`\\s*\\s+x` is searched as `\\sx`, `[a-z]+_` as `[a-z]_`, `\\s+$` as `\\s$`); then one that repeats a group holding a repetition or an alternation (such as `(a+)+`), or has unbounded repetitions next to each other that can match a same character, with at most optional items between (such as `x-*-*y`, `\\w+\\w+=`, `=\\s*\\s+$`, `a.*\\s*=`; judged before the first item's cut), or has items next to each other that can share a stretch of a line in more than " +
      count(GREP_V8_MAX_WAYS) +
      " ways, counting those of bounded repetitions, optional items and alternatives and leaving out the largest (such as `x\\w{0,40}\\w{0,40}\\w{0,40}!` or `a{0,9}a{0,9}a{0,9}a{0,9}`), or has more than " +
      count(GREP_V8_MAX_CHOICES) +
      " repeated items and groups of alternatives in a row, alternatives counting as their longest (V8's time to compile a pattern grows with about the square of such a row: seconds past a thousand), runs on RE2, in linear time, if it compiles to at most " +
      count(GREP_RE2_MAX_INSTRUCTIONS) +
      " RE2 instructions (`invalid_regex` past it: RE2's time per character grows with them; counted repetitions such as `{500}` make many); on RE2, and only there, a character is a code point, `\\s` and `\\w` are ASCII, `ignoreCase` folds as Unicode does (`k` also matches the Kelvin sign, `s` the long s), and a look-around or back-reference is refused (`invalid_regex`; V8 takes them); texts joined by `.*` or `.+` (such as `import.*from.*react` or `import .* from [\"@].*\"`; a text's characters may be `.`, classes or `\\d` `\\w` `\\S`, unrepeated, that match no line terminator, at most 64 of them in a pattern) are found in order, in linear time; other patterns run on V8, which can take time growing with the square of a long line's length (`[a-z][a-z0-9]*_` or `\\w+=.*x` on a minified line); the pattern is JavaScript's without the u flag, with ripgrep's `(?i)`, POSIX classes and `\\x{...}` read as ripgrep reads them, and its Unicode classes (`\\p{L}`) refused (`invalid_regex`); a line is what ends at a \"\\n\", without a \"\\r\" before it, as ripgrep's `--crlf` reads lines (`;$` matches a line ending in `;\\r\\n`, where plain `rg` and GNU grep do not)",
  ],
  [
    "a `find` or `grep` glob",
    "read as fd and rg read globs: `x/**` takes what is inside x, not x itself; a `find` pattern without capital letters matches in either case (`readme*` finds README.md) and one with a capital matches case exactly, as fd's smart case does, while a `grep` glob always matches case exactly, as rg's does; parentheses and the vertical bar are the characters themselves (no extglobs such as `+(x)`, whose matching can take exponential time); one with more than two `*`, `**` and braces together is matched in linear time, on RE2; `?` and a class take one character (an emoji too, but after an escape picomatch keeps, such as `\\~`, one UTF-16 unit); a class out of order (`[z-a]`) is `invalid_glob`",
  ],
  [
    "a `.gitignore` rule",
    `read as git reads it (the \`ignore\` library), ${count(MAX_GITIGNORE_RULES)} rules in all (shallower files first; past them a notice says the rest are not applied); a rule with more than two runs of \`*\` (\`**/a/**/b/**/c\`) is matched in linear time, on RE2 (such a rule held the isolate for seconds to minutes on a deep path); in a rule on RE2 a class that spans \`/\` (\`[%-0]\`) can take a \`/\`, where git's never does`,
  ],
  [
    "tool output",
    `${count(TOOL_OUTPUT_MAX_LINES)} lines or ${bytes(TOOL_OUTPUT_MAX_BYTES)}, with a notice telling the model how to continue; in a run (whose budget per result is at most ${bytes(TOOL_OUTPUT_MAX_BYTES)}) ${bytes(NOTICE_ROOM_BYTES)} of it is kept for the notices (half of it, of a budget under ${bytes(2 * NOTICE_ROOM_BYTES)}: a context window under 2,560 tokens), so output is cut at ${bytes(TOOL_OUTPUT_MAX_BYTES - NOTICE_ROOM_BYTES)} (a file of exactly ${bytes(TOOL_OUTPUT_MAX_BYTES)} is shown cut); \`read\` continues by lines (\`offset\`), so of one line longer than the budget it shows the start only, and says so (with \`allowBash\`, naming a command line of \`sed\`, \`cut\` and \`head -c\` that prints the rest)`,
  ],
  [
    "`bash`",
    `simulated shell (just-bash), no network; ${BASH_DEFAULT_TIMEOUT_MS / 1000} s default / ${BASH_MAX_TIMEOUT_MS / 1000} s max per command; ${bytes(BASH_MAX_WRITTEN_BYTES)} written per command, ${bytes(BASH_MAX_OUTPUT_BYTES_PER_COMMAND)} of it output; ${count(BASH_MAX_COMMANDS)} commands and ${count(BASH_MAX_LOOP_ITERATIONS)} passes of one loop per call; 100,000 lines, matches or items per command; ${bytes(BASH_MAX_READ_BYTES)} read per call; every bound, and what passing it does: [The bash tool in detail](#the-bash-tool-in-detail)`,
  ],
  [
    "one model answer",
    `${bytes(MAX_MODEL_OUTPUT_CHARS).replace("MiB", "Mi")} characters of text, reasoning, tool-call names and arguments, and ${MAX_TOOL_CALLS_PER_ANSWER} tool calls (past either: \`agent_error\` \`output_too_large\`, stop reason \`LENGTH\`, the text before the cut kept); one event of the provider's stream (its lines up to a blank line), or a JSON answer, of more than ${bytes(MAX_PROVIDER_EVENT_BYTES - 64 * KiB)} + 64 KiB (6 bytes for each character of the limit) is cut the same way as soon as it passes that, before it is parsed`,
  ],
  ["one stored record", `${bytes(MAX_RECORD_BYTES)} of JSON (stored across SQLite rows; the Durable Object row limit is 2 MB)`],
  [
    "context window",
    `a prompt's \`contextWindow\` (${count(MIN_CONTEXT_WINDOW_TOKENS)}-${count(MAX_CONTEXT_WINDOW_TOKENS)}), else \`MODEL_CONTEXT_WINDOW\`, else the known-model table, else ${count(DEFAULT_CONTEXT_WINDOW_TOKENS)} tokens`,
  ],
  [
    "compaction",
    `when the estimate passes the window minus ${count(COMPACTION_RESERVE_TOKENS)} tokens; keeps the newest ~${count(COMPACTION_KEEP_RECENT_TOKENS)} tokens (each at most ${COMPACTION_MAX_WINDOW_SHARE * 100} % of a small window); the summary, its file lists included, at most ${COMPACTION_SUMMARY_RESERVE_SHARE * 100} % of that reserve (${count(Math.floor(COMPACTION_RESERVE_TOKENS * COMPACTION_SUMMARY_RESERVE_SHARE))} tokens at ${CHARS_PER_TOKEN} characters a token; a longer answer is cut in the middle, and a file list past a quarter of it keeps its newest paths)`,
  ],
  [
    "one tool result in the context",
    `${TOOL_RESULT_MAX_WINDOW_SHARE * 100} % of the context window (at ${CHARS_PER_TOKEN} characters a token), within the tool output limit`,
  ],
  [
    "trace import",
    `${bytes(MAX_TRACE_IMPORT_BYTES)} of JSONL per request (413 \`body_too_large\`); a line's ids (\`runId\`, \`actionId\`, \`taskId\`, \`attemptId\`, ...) at most ${MAX_TRACE_ID_CHARS} characters, and its record at most ${bytes(MAX_IMPORTED_TRACE_RECORD_BYTES)} of JSON once normalised (past either, the line is quarantined)`,
  ],
  [
    "an `attribution` record (the harness's own hold no more; an imported line past any of these is quarantined)",
    `ids of at most ${MAX_TRACE_ID_CHARS} characters; at most ${count(MAX_ATTRIBUTION_ACTION_IDS)} source and ${count(MAX_ATTRIBUTION_ACTION_IDS)} touched action ids (a run's latest), ${MAX_TRACE_ARTIFACT_REFS} artifact refs of at most ${count(MAX_PATH_CHARS)} characters, ${MAX_EVIDENCE_REFS} evidence refs of at most ${count(MAX_EVIDENCE_REF_CHARS)} and the newest ${MAX_CASE_MEMORY_READS} case ids of the briefs its run was given`,
  ],
  [
    "quarantine",
    `an import's first ${count(MAX_QUARANTINED_LINES_PER_IMPORT)} refused lines with their reasons (its answer's \`quarantined\` counts them all); ${count(MAX_PROJECT_QUARANTINE_LINES)} per project, the oldest imports' lines going first`,
  ],
  ["quarantine list page", `\`limit\` 1-${count(MAX_QUARANTINE_PAGE)} (default ${DEFAULT_QUARANTINE_PAGE})`],
  [
    "imported trace records per project",
    `${bytes(MAX_PROJECT_IMPORTED_RECORD_BYTES)} of JSON: the newest imports' records (an import's first ones if it alone is larger), the oldest imports' going first`,
  ],
  [
    "replay outcomes per project",
    `the latest ${count(MAX_PROJECT_REPLAY_OUTCOMES)} (a failure whose replay the same judge passed is \`flaky\` when judged again)`,
  ],
  [
    "failed-turn cases per project",
    `${count(MAX_PROJECT_CASES)} cases in ${bytes(MAX_PROJECT_CASE_BYTES)} of JSON, one case at most ${bytes(MAX_CASE_BYTES)} (the newest ${MAX_CASE_MEMORY_READS} case ids of the briefs its runs were given, ${MAX_EVIDENCE_REFS} evidence refs, its first and latest, and its first artifact refs that fit, at most ${MAX_TRACE_ARTIFACT_REFS}); a new case past either evicts the least recently seen case that is not promoted, approved, verified by a replay or being replayed (imported cases first; an import evicts only imported ones, and says how many of its cases it could not keep), and so does a case that grows when seen again (never itself; when nothing can go, it keeps what it held and only counts the sighting)`,
  ],
  [
    "case list page",
    `\`limit\` 1-${MAX_CASE_PAGE} (default ${DEFAULT_CASE_PAGE}), at most ${bytes(MAX_CASE_PAGE_BYTES)} of cases (a page ends early past it, with a \`nextCursor\`)`,
  ],
  [
    "attribution list page",
    `\`limit\` 1-${count(MAX_ATTRIBUTION_PAGE)} (default ${DEFAULT_ATTRIBUTION_PAGE}), and at most ${bytes(MAX_ATTRIBUTION_PAGE_BYTES)} of JSON: a page ends before the attribution that would pass it (a page holds one at least)`,
  ],
  [
    "Failure Prevention Brief",
    `at most ${MAX_BRIEF_CASES} cases in ${count(MAX_BRIEF_CHARS)} characters, a case's hint at most ${MAX_PREVENTION_HINT_CHARS} (long paths shortened from the start); a case's replay validation holds ${CASE_VALIDATION_MAX_AGE_MS / 86_400_000} days`,
  ],
];
