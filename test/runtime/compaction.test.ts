import { describe, expect, it } from "vitest";
import { type AgentMessage, type CompactionMessage, counterIds, safeRunOptions } from "../../src/domain";
import { type ModelClient, type ModelEvent, type ModelRequest, ReplayModelClient, toOpenAIMessages, toOpenAITools } from "../../src/model";
import { type RunContext, runAgent } from "../../src/runtime/agent-runtime";
import { compact, filesTouched, listedFiles, SUMMARY_SYSTEM_PROMPT } from "../../src/runtime/compaction";
import { type ContextBudget, contextBudget, cutMiddle, modelView } from "../../src/runtime/context-window";
import { FakeToolRunner, MemoryRunLog } from "../helpers/run-fixtures";

const WINDOW = 4_000;
const T0 = Date.parse("2026-11-30T03:00:00Z");

/** The tokens of a request as a provider would count them here: the JSON it is sent, at 4 characters a token. */
function requestTokens(request: ModelRequest): number {
  const body = JSON.stringify(toOpenAIMessages(request.system, request.messages)) + JSON.stringify(toOpenAITools(request.tools));
  return Math.ceil(body.length / 4);
}

type Answer = (request: ModelRequest, call: number) => ModelEvent[];

/**
 * A model for these tests: agent turns come from `turn` (with usage as the provider would report it),
 * summary requests from `summary`; every request is recorded with its measured size.
 */
class TestModel implements ModelClient {
  readonly requests: { request: ModelRequest; tokens: number }[] = [];
  agentCalls = 0;
  summaryCalls = 0;
  constructor(
    private readonly turn: Answer,
    private readonly summary: Answer = () => [
      {
        type: "text_delta",
        text: "## Goal\nread files\n## Decisions\nnone\n## Files\nsee lists\n## Open problems\nnone\n## Next steps\ngo on",
      },
      { type: "done", stopReason: "STOP" },
    ],
  ) {}

  async *stream(request: ModelRequest): AsyncIterable<ModelEvent> {
    const tokens = requestTokens(request);
    this.requests.push({ request: structuredClone(request), tokens });
    if (request.purpose === "compaction") {
      yield* this.summary(request, ++this.summaryCalls);
      return;
    }
    const events = this.turn(request, ++this.agentCalls);
    for (const event of events) {
      yield event.type === "done" ? { ...event, usage: { inputTokens: tokens, outputTokens: 20, totalTokens: tokens + 20 } } : event;
    }
  }

  agentRequests() {
    return this.requests.filter((r) => r.request.purpose !== "compaction");
  }
}

/**
 * A turn and a summary about six times the window, as versions before hunt 67 stored one (summaries
 * had no bound), that keeps the whole turn: nothing is older than the kept messages.
 */
function withLongSummary(): { summary: string; history: AgentMessage[] } {
  const at = (i: number) => new Date(T0 + i * 1000).toISOString();
  const summary = `## Goal\n${"g".repeat(12_000)}\n## Next steps\n${"n".repeat(12_000)}`;
  const history: AgentMessage[] = [
    { kind: "user", id: "m_1", sessionId: "s_1", parentId: null, createdAt: at(1), text: "read everything" },
    { kind: "assistant", id: "m_2", sessionId: "s_1", parentId: "m_1", createdAt: at(2), text: "Done.", stopReason: "STOP" },
    {
      kind: "compaction",
      id: "m_3",
      sessionId: "s_1",
      parentId: "m_2",
      createdAt: at(3),
      summary,
      firstKeptMessageId: "m_1",
      tokensBefore: 9_000,
      tokensAfter: 6_100,
    },
  ];
  return { summary, history };
}

/** Reads `f<n>.ts` until `reads` files were read, then answers. */
const reader =
  (reads: number): Answer =>
  (_request, call) =>
    call <= reads
      ? [
          { type: "tool_call", call: { id: `tc_${call}`, name: "read", arguments: { path: `src/f${call}.ts` } } },
          { type: "done", stopReason: "TOOL_CALLS" },
        ]
      : [
          { type: "text_delta", text: "All files read." },
          { type: "done", stopReason: "STOP" },
        ];

/** A tool that answers every read with `chars` characters. */
const bigFiles = (chars: number) =>
  new FakeToolRunner((call) => ({ outcome: "finished", text: `// ${String(call.arguments.path)}\n${"x".repeat(chars)}`, error: false }));

function context(model: ModelClient, opts: { history?: AgentMessage[]; budget?: ContextBudget; ids?: ReturnType<typeof counterIds> } = {}) {
  const log = new MemoryRunLog();
  const ctx: RunContext = {
    sessionId: "s_1",
    runId: "r_1",
    workspaceId: "w_1",
    history: opts.history ?? [],
    setup: { ok: true, model, tools: bigFiles(1_200) },
    log,
    signal: new AbortController().signal,
    ids: opts.ids ?? counterIds(),
    clock: () => T0,
    budget: opts.budget ?? contextBudget(WINDOW),
  };
  return { log, ctx };
}

const options = { ...safeRunOptions(), maxTurns: 30, maxToolCalls: 50 };

describe("compaction in the agent loop", () => {
  it("a session growing past a small window is compacted before the call that would overflow, and the run finishes", async () => {
    const model = new TestModel(reader(12));
    const { log, ctx } = context(model);
    expect(await runAgent("read all twelve files", options, ctx)).toEqual({ stopReason: "STOP" });

    const compactions = log.messages.filter((m): m is CompactionMessage => m.kind === "compaction");
    expect(compactions.length).toBeGreaterThanOrEqual(1);
    expect(log.types()).toContain("compaction_started");
    expect(log.events.find((e) => e.type === "compaction_started")).toMatchObject({ reason: "threshold" });
    expect(log.types().at(-1)).toBe("agent_completed");
    // No request the model received passed the window.
    for (const { tokens } of model.requests) expect(tokens).toBeLessThanOrEqual(WINDOW);

    // The request after the first compaction: its summary, then exactly the kept messages.
    const first = compactions[0]!;
    const after = model.requests.findIndex((r) => r.request.purpose === "compaction") + 1;
    const next = model.requests[after]!.request;
    expect(next.messages[0]).toEqual(first);
    const at = log.messages.indexOf(first);
    const keptFrom = log.messages.findIndex((m) => m.id === first.firstKeptMessageId);
    expect(next.messages.slice(1)).toEqual(log.messages.slice(keptFrom, at));
    expect(next.messages[1]!.kind).not.toBe("tool_result");
    expect(next.assistantTurns).toBe(log.messages.slice(0, at).filter((m) => m.kind === "assistant").length);

    // The log holds every original message plus the compaction records.
    expect(log.messages.filter((m) => m.kind === "tool_result")).toHaveLength(12);
    expect(log.messages.filter((m) => m.kind === "assistant")).toHaveLength(13);
    expect(log.messages.filter((m) => m.kind === "user")).toHaveLength(1);
    expect(first.tokensAfter).toBeLessThan(first.tokensBefore);
    expect(first.summary).toContain("## Goal");
    expect(first.summary).toContain("<read-files>\nsrc/f1.ts");
    expect(log.events.find((e) => e.type === "compaction_finished")).toMatchObject({
      messageId: first.id,
      tokensBefore: first.tokensBefore,
      tokensAfter: first.tokensAfter,
    });
    // The summary request itself fits, and carries no tools.
    const summaryRequest = model.requests.find((r) => r.request.purpose === "compaction")!.request;
    expect(summaryRequest.system).toBe(SUMMARY_SYSTEM_PROMPT);
    expect(summaryRequest.tools).toEqual([]);
  });

  it("a later compaction lists the files of everything before it, also from a history that starts at the previous one", async () => {
    const first = context(new TestModel(reader(12)));
    await runAgent("read all twelve files", options, first.ctx);
    const earlier = first.log.messages;
    const previous = earlier.filter((m): m is CompactionMessage => m.kind === "compaction").at(-1)!;
    expect(listedFiles(previous.summary).read).toContain("src/f1.ts");
    // The next run gets the history as a session holds it: from the latest compaction's first kept message on.
    const held = earlier.slice(earlier.findIndex((m) => m.id === previous.firstKeptMessageId));
    expect(held.some((m) => m.kind === "assistant" && m.toolCalls?.some((c) => c.arguments.path === "src/f1.ts"))).toBe(false);
    const writer: Answer = (_request, call) =>
      call <= 12
        ? [
            {
              type: "tool_call",
              call: {
                id: `tw_${call}`,
                name: call === 1 ? "write" : "read",
                arguments: { path: call === 1 ? "src/f1.ts" : `src/g${call}.ts`, content: "x" },
              },
            },
            { type: "done", stopReason: "TOOL_CALLS" },
          ]
        : [
            { type: "text_delta", text: "done" },
            { type: "done", stopReason: "STOP" },
          ];
    const second = context(new TestModel(writer), { history: held, ids: idsAfter(earlier) });
    await runAgent("again, and write f1", options, second.ctx);
    const latest = second.log.messages.filter((m): m is CompactionMessage => m.kind === "compaction").at(-1)!;
    expect(latest).toBeDefined();
    // The lists equal what the whole log before its cut touched: f1 read before, now written, is listed as modified.
    const whole = [...earlier, ...second.log.messages];
    const expected = filesTouched(
      whole.slice(
        0,
        whole.findIndex((m) => m.id === latest.firstKeptMessageId),
      ),
    );
    expect(listedFiles(latest.summary)).toEqual(expected);
    expect(expected.modified).toContain("src/f1.ts");
    // f2 was read only in the first run, before its compaction: the held history has no trace of it.
    expect(expected.read).toContain("src/f2.ts");
    expect(expected.read).toContain("src/g2.ts");
  });

  it("a context-overflow answer from the provider: compact, then retry the call once", async () => {
    const history = (await grownHistory(12, 100_000)).messages;
    const model = new TestModel((_r, call) =>
      call === 1
        ? [{ type: "error", code: "context_overflow", message: "maximum context length is 4000 tokens" }]
        : [
            { type: "text_delta", text: "done" },
            { type: "done", stopReason: "STOP" },
          ],
    );
    const { log, ctx } = context(model, { history, budget: contextBudget(8_000), ids: idsAfter(history) });
    expect(await runAgent("and now?", options, ctx)).toEqual({ stopReason: "STOP" });
    expect(model.requests.map((r) => r.request.purpose ?? "turn")).toEqual(["turn", "compaction", "turn"]);
    expect(log.events.find((e) => e.type === "compaction_started")).toMatchObject({ reason: "overflow" });
    expect(model.requests[2]!.request.messages[0]!.kind).toBe("compaction");
    expect(log.types().at(-1)).toBe("agent_completed");
    // The failed attempt left no message behind; the retry's answer is the turn's one assistant message.
    expect(log.messages.filter((m) => m.kind === "assistant").map((m) => (m.kind === "assistant" ? m.text : ""))).toEqual(["done"]);
  });

  it("a second overflow after the retry ends the run with context_overflow", async () => {
    const history = (await grownHistory(12, 100_000)).messages;
    const model = new TestModel(() => [{ type: "error", code: "context_overflow", message: "prompt is too long" }]);
    const { log, ctx } = context(model, { history, budget: contextBudget(8_000), ids: idsAfter(history) });
    const outcome = await runAgent("and now?", options, ctx);
    expect(outcome.error?.code).toBe("context_overflow");
    expect(model.requests.map((r) => r.request.purpose ?? "turn")).toEqual(["turn", "compaction", "turn"]);
    expect(log.types().at(-1)).toBe("agent_error");
  });

  it("a failing summary: compaction_failed, the run ends with context_overflow, and the next prompt works", async () => {
    const history = (await grownHistory(12, 100_000)).messages;
    const failing = new TestModel(
      () => [{ type: "error", code: "context_overflow", message: "prompt is too long" }],
      () => [{ type: "error", code: "provider_error", message: "summary service down" }],
    );
    const first = context(failing, { history, budget: contextBudget(8_000), ids: idsAfter(history) });
    const outcome = await runAgent("and now?", options, first.ctx);
    expect(outcome.error?.code).toBe("context_overflow");
    expect(first.log.events.find((e) => e.type === "compaction_failed")).toMatchObject({ code: "provider_error" });
    expect(first.log.messages.some((m) => m.kind === "compaction")).toBe(false);
    expect(first.log.types().slice(-3)).toEqual(["compaction_failed", "assistant_completed", "agent_error"]);

    const after = [...history, ...first.log.messages];
    const working = new TestModel(() => [
      { type: "text_delta", text: "fine again" },
      { type: "done", stopReason: "STOP" },
    ]);
    const second = context(working, { history: after, budget: contextBudget(8_000), ids: idsAfter(after) });
    expect(await runAgent("try again", options, second.ctx)).toEqual({ stopReason: "STOP" });
  });

  it("an abort or a timeout during the summary closes the compaction with compaction_failed (run_aborted, run_timeout)", async () => {
    const history = (await grownHistory(12, 100_000)).messages;
    for (const [reason, code, message] of [
      ["abort", "run_aborted", "the run was aborted during the compaction; nothing was compacted"],
      ["timeout", "run_timeout", "the run timed out during the compaction; nothing was compacted"],
    ] as const) {
      const controller = new AbortController();
      // The summary waits for the run's signal: the user's abort, or the run's own timeout.
      const waiting: ModelClient = {
        async *stream(request: ModelRequest, signal?: AbortSignal): AsyncIterable<ModelEvent> {
          if (request.purpose !== "compaction") {
            yield { type: "error", code: "context_overflow", message: "prompt is too long" };
            return;
          }
          if (reason === "abort") controller.abort();
          await new Promise((resolve) => (signal!.aborted ? resolve(null) : signal!.addEventListener("abort", resolve)));
          yield { type: "error", code: "aborted", message: "the request was aborted" };
        },
      };
      const run = context(waiting, { history, budget: contextBudget(8_000), ids: idsAfter(history) });
      await runAgent("and now?", { ...options, timeoutMs: reason === "timeout" ? 50 : 60_000 }, { ...run.ctx, signal: controller.signal });
      const failed = run.log.events.filter((e) => e.type === "compaction_failed");
      expect(failed.map((e) => [e.code, e.message])).toEqual([[code, message]]);
      expect(run.log.types().filter((t) => t.startsWith("compaction_"))).toEqual(["compaction_started", "compaction_failed"]);
    }
  });

  it("a summary is cut to 80 % of the reserve, file lists included, so a long answer cannot make every later request overflow (hunt 67)", async () => {
    const budget = contextBudget(WINDOW);
    const maxChars = Math.floor(budget.reserveTokens * 0.8) * 4;
    // A model that answers every summary request with about six times the window.
    const long: Answer = () => [
      { type: "text_delta", text: `## Goal\n${"g".repeat(12_000)}\n## Next steps\n${"n".repeat(12_000)}` },
      { type: "done", stopReason: "STOP" },
    ];
    const history: AgentMessage[] = [];
    const ids = counterIds();
    let prompt = 0;
    // Each prompt reads 20 files of its own: 80 paths, more than a quarter of the summary holds.
    const model = new TestModel(
      (_request, call) =>
        call <= 20
          ? [
              { type: "tool_call", call: { id: `tc_${prompt}_${call}`, name: "read", arguments: { path: `src/p${prompt}/f${call}.ts` } } },
              { type: "done", stopReason: "TOOL_CALLS" },
            ]
          : [
              { type: "text_delta", text: "All files read." },
              { type: "done", stopReason: "STOP" },
            ],
      long,
    );
    for (prompt = 1; prompt <= 4; prompt++) {
      const { log, ctx } = context(model, { history: [...history], ids });
      expect(await runAgent(`prompt ${prompt}`, options, ctx)).toEqual({ stopReason: "STOP" });
      history.push(...log.messages);
      model.agentCalls = 0;
    }
    const compactions = history.filter((m): m is CompactionMessage => m.kind === "compaction");
    expect(compactions.length).toBeGreaterThan(3);
    for (const c of compactions) {
      expect(c.summary.length).toBeLessThanOrEqual(maxChars);
      // Its start and end, with what was left out between them said.
      expect(c.summary).toMatch(/^## Goal\ng+\n\[\.\.\. \d+ characters omitted \.\.\.\]\nn+\n\n<read-files>\n/);
    }
    // The file lists keep their newest paths and say how many earlier ones they left out.
    const last = compactions.at(-1)!.summary;
    expect(last).toMatch(/\n\[… \d+ earlier path\(s\) not listed\]\n<\/read-files>$/);
    expect(listedFiles(last).read.at(-1)).toMatch(/^src\/p4\/f\d+\.ts$/);
    for (const { tokens } of model.requests) expect(tokens).toBeLessThanOrEqual(WINDOW);
  });

  it("a summary stored longer than the bound (before hunt 67, or under a larger window) is sent cut as a new one would be (hunt 81)", async () => {
    const budget = contextBudget(WINDOW);
    const maxChars = Math.floor(budget.reserveTokens * 0.8) * 4;
    const { summary, history } = withLongSummary();
    const model = new TestModel(reader(0));
    const { log, ctx } = context(model, { history });
    expect(await runAgent("go on", options, ctx)).toEqual({ stopReason: "STOP" });
    // Every request of the session overflowed, and nothing was older than the summary to compact.
    const [sent] = model.agentRequests();
    expect(sent!.tokens).toBeLessThanOrEqual(WINDOW);
    expect(sent!.request.messages[0]).toEqual({ ...history[2], summary: cutMiddle(summary, maxChars) });
    expect(log.types().filter((t) => t.startsWith("compaction_"))).toEqual([]);
    // The view without a budget (the log's own reading) keeps the summary as stored.
    expect((modelView(history).messages[0] as CompactionMessage).summary).toBe(summary);
  });

  it("a client's compaction rewrites a stored summary longer than the bound; a run's does not (hunt 81)", async () => {
    const budget = contextBudget(WINDOW);
    const { summary, history } = withLongSummary();
    const events: string[] = [];
    const appended: Omit<CompactionMessage, "id" | "sessionId" | "parentId" | "createdAt">[] = [];
    const log = {
      event: (body: { type: string }) => void events.push(body.type),
      append: (record: (typeof appended)[number]) => {
        appended.push(record);
        return { ...record, id: "m_4", sessionId: "s_1", parentId: "m_3", createdAt: new Date(T0 + 4000).toISOString() };
      },
    };
    const model = new TestModel(reader(0));
    const input = { history, model, budget, fixedTokens: 100, signal: new AbortController().signal };
    // Nothing is older than the kept messages: a run's compaction has nothing to do.
    expect(await compact(input, "threshold", log)).toEqual({
      ok: false,
      code: "nothing_to_compact",
      message: "the history is too short to compact",
    });
    const result = await compact(input, "manual", log);
    expect(result.ok).toBe(true);
    expect(events).toEqual(["compaction_started", "compaction_finished"]);
    // The summary request holds the stored summary as requests send it (cut), and no conversation.
    const [request] = model.requests;
    expect(request!.request.messages[0]).toMatchObject({
      kind: "user",
      text: `<previous-summary>\n${cutMiddle(summary, Math.floor(budget.reserveTokens * 0.8) * 4)}\n</previous-summary>\n\nUpdate the previous summary with the conversation below.\n\n<conversation>\n\n</conversation>`,
    });
    expect(appended.map((r) => [r.firstKeptMessageId, r.summary])).toEqual([
      ["m_1", "## Goal\nread files\n## Decisions\nnone\n## Files\nsee lists\n## Open problems\nnone\n## Next steps\ngo on"],
    ]);
  });

  it("a 50-prompt session never sends a request larger than the window", async () => {
    const history: AgentMessage[] = [];
    const ids = counterIds();
    const model = new TestModel((request) => {
      // One read per prompt, then an answer.
      const last = request.messages.at(-1)!;
      return last.kind === "user"
        ? [
            { type: "tool_call", call: { id: `tc_${history.length}`, name: "read", arguments: { path: `src/p${history.length}.ts` } } },
            { type: "done", stopReason: "TOOL_CALLS" },
          ]
        : [
            { type: "text_delta", text: `answer ${"y".repeat(300)}` },
            { type: "done", stopReason: "STOP" },
          ];
    });
    for (let i = 1; i <= 50; i++) {
      const { log, ctx } = context(model, { history: [...history], ids });
      expect(await runAgent(`prompt ${i}: ${"z".repeat(200)}`, options, ctx)).toEqual({ stopReason: "STOP" });
      history.push(...log.messages);
    }
    expect(model.agentRequests()).toHaveLength(100);
    for (const { tokens } of model.requests) expect(tokens).toBeLessThanOrEqual(WINDOW);
    expect(history.filter((m) => m.kind === "compaction").length).toBeGreaterThan(3);
    expect(history.filter((m) => m.kind === "user")).toHaveLength(50);
  });

  it("a message larger than the window (an import) is cut to its start and end in the summary request: the session compacts and goes on", async () => {
    const ids = counterIds();
    const msg = (body: Record<string, unknown>): AgentMessage =>
      ({ id: ids.next("message"), sessionId: "s_1", parentId: null, createdAt: new Date(T0).toISOString(), ...body }) as AgentMessage;
    const huge = `BEGIN${"x".repeat(WINDOW * 4 * 5)}END`;
    const history = [
      msg({ kind: "user", text: "first" }),
      msg({ kind: "assistant", text: "ok", stopReason: "STOP" }),
      msg({ kind: "user", text: huge }),
      msg({ kind: "assistant", text: "noted", stopReason: "STOP" }),
    ];
    const model = new TestModel(reader(0));
    const { log, ctx } = context(model, { history, ids });
    expect(await runAgent("go on", options, ctx)).toEqual({ stopReason: "STOP" });
    expect(log.types()).toEqual([
      "agent_started",
      "user_message_appended",
      "compaction_started",
      "compaction_finished",
      "assistant_delta",
      "assistant_completed",
      "agent_completed",
    ]);
    for (const { tokens } of model.requests) expect(tokens).toBeLessThanOrEqual(WINDOW);
    const summary = model.requests.find((r) => r.request.purpose === "compaction")!.request;
    const text = (summary.messages[0] as { text: string }).text;
    const budget = contextBudget(WINDOW);
    expect(text.length).toBeLessThanOrEqual((budget.contextWindow - budget.reserveTokens) * 4);
    // The two messages before it are left out and named; the large one keeps its start and end.
    expect(text).toMatch(
      /^<conversation>\n\[2 earlier message\(s\) omitted: they did not fit the summary request\]\n\[User\]: BEGINx+\n\[\.\.\. \d+ characters omitted \.\.\.\]\nx+END\n<\/conversation>$/,
    );
  });

  it("cutMiddle keeps a text's start and end within the limit and says how much it left out", () => {
    expect(cutMiddle("short", 10)).toBe("short");
    const cut = cutMiddle("a".repeat(50) + "b".repeat(50), 60);
    expect(cut).toBe(`${"a".repeat(13)}\n[... 74 characters omitted ...]\n${"b".repeat(13)}`);
    expect(cut.length).toBe(59);
    expect(cutMiddle("a".repeat(100), 10)).toBe("\n[... 100 characters omitted ...]\n");
    // Neither cut splits an emoji: the start gives one unit back, the end takes one fewer.
    const emoji = cutMiddle(`${"a".repeat(12)}😀${"b".repeat(72)}😀${"c".repeat(12)}`, 60);
    expect(emoji).toBe(`${"a".repeat(12)}\n[... 74 characters omitted ...]\n${"c".repeat(12)}`);
  });

  it("a replay plays a compacted recording turn for turn; its summary calls play the recorded summaries", async () => {
    const recorded = await grownHistory(12);
    expect(recorded.messages.some((m) => m.kind === "compaction")).toBe(true);
    const replay = new ReplayModelClient(recorded.messages);
    const log = new MemoryRunLog();
    const ctx: RunContext = {
      sessionId: "s_2",
      runId: "r_2",
      workspaceId: "w_1",
      history: [],
      setup: { ok: true, model: replay, tools: bigFiles(1_200) },
      log,
      signal: new AbortController().signal,
      ids: counterIds(),
      clock: () => T0,
      budget: contextBudget(WINDOW),
    };
    expect(await runAgent("read all twelve files", options, ctx)).toEqual({ stopReason: "STOP" });
    const turns = (messages: AgentMessage[]) =>
      messages.flatMap((m) => (m.kind === "assistant" ? [[m.text, m.toolCalls ?? [], m.stopReason]] : []));
    expect(turns(log.messages)).toEqual(turns(recorded.messages));
    const summaries = (messages: AgentMessage[]) => messages.flatMap((m) => (m.kind === "compaction" ? [m.summary] : []));
    expect(summaries(log.messages)).toEqual(summaries(recorded.messages));
  });

  it("modelView of a log without compaction is the log", () => {
    const messages: AgentMessage[] = [
      { kind: "user", id: "m_1", sessionId: "s_1", parentId: null, createdAt: "2026-11-30T03:00:00.000Z", text: "x" },
    ];
    expect(modelView(messages)).toEqual({ messages, freshFrom: 0 });
  });
});

/** A recorded run that read `reads` files of 1,200 characters in a `window`-token window. */
async function grownHistory(reads: number, window = WINDOW) {
  const model = new TestModel(reader(reads));
  const { log, ctx } = context(model, { ids: counterIds(), budget: contextBudget(window) });
  await runAgent("read all twelve files", options, ctx);
  return { messages: log.messages, model };
}

/** Ids that continue after the history's (counterIds restart at 1). */
function idsAfter(history: AgentMessage[]) {
  const ids = counterIds();
  for (let i = 0; i < history.length * 10; i++) ids.next("message");
  return ids;
}
