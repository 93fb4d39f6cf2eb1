import {
  type AgentEvent,
  type AgentMessage,
  type AgentRunOptions,
  type AssistantMessage,
  type CompactionMessage,
  DEFAULT_CONTEXT_WINDOW_TOKENS,
  type ErrorCode,
  type IdGenerator,
  nowIso,
  PROVIDER_TIMEOUT,
  type RunErrorCode,
  type StopReason,
  type ToolCall,
  toolResultSummary,
  type Usage,
  wellFormed,
  wellFormedJson,
} from "../domain";
import { logLine } from "../log";
import { costOf, type InvalidToolCall, type ModelClient, type ModelEvent, type ModelPrice, type ModelRequest } from "../model";
import type { ToolExecution, ToolRunner } from "../tools/execution-service";
import { eventLoopTurn } from "../workspace/event-loop-turns";
import { type CompactionReason, compact } from "./compaction";
import { type ContextBudget, contextBudget, estimateContextTokens, estimateFixedTokens, modelView } from "./context-window";
import { DeltaCoalescer } from "./delta-coalescer";
import { fitToolResult } from "./result-budget";
import type { RunLog } from "./run-log";
import type { RunSetup } from "./run-setup";
import { RunTracer, type TurnTrace } from "./run-tracer";
import { appendBrief, buildSystemPrompt } from "./system-prompt";

/** How long a model call runs before the tools start warming up (see `turnCall`). */
export const WARM_UP_AFTER_MS = 50;

/** Everything one run needs; the SessionDO builds it, tests build it with scripted parts. */
export interface RunContext {
  sessionId: string;
  runId: string;
  workspaceId: string | null;
  /** The session's messages before this prompt, in order. */
  history: readonly AgentMessage[];
  /** Assistant messages of the session before `history` (it starts at the latest compaction): replays align on the whole count. */
  assistantsBefore?: number;
  /** The model and tools, or why the run cannot start (it then records that and ends with ERROR). */
  setup: RunSetup;
  log: RunLog;
  ids: IdGenerator;
  clock: () => number;
  /** Fires on an explicit abort. The run's timeout is handled here. */
  signal: AbortSignal;
  /** The run this one retries (another attempt of the same task), if any. */
  retryOf?: string | null;
  /** A Failure Prevention Brief for this run, if cases matched (added to the system prompt). */
  brief?: RunBrief | null;
  /** The id the prompt's user message gets (announced earlier when the prompt was queued). */
  userMessageId?: string;
  /** The caller logged `agent_started` when the run took its slot (the session does); otherwise the run logs it first. */
  startAnnounced?: boolean;
  /**
   * Steering messages that arrived while the run was busy, taken (and so delivered) at a turn
   * boundary: after the tool calls of a turn, before the next model call. The caller removes them
   * from its queue; the run appends them as user messages in the same synchronous step.
   */
  takeSteering?: () => { messageId: string; text: string }[];
  /** The model's context window and how compaction divides it; the conservative default when absent. */
  budget?: ContextBudget;
  /** The model's prices, when known: assistant messages then carry `cost`. */
  price?: ModelPrice | null;
}

/** The brief a run is given: its text and the cases it was built from. */
export interface RunBrief {
  text: string;
  caseIds: string[];
  promotedCaseIds: string[];
}

export interface RunOutcome {
  stopReason: StopReason;
  error?: { code: RunErrorCode; message: string };
}

type EventBody = AgentEvent extends infer E ? (E extends AgentEvent ? Omit<E, "eventId" | "sessionId" | "createdAt"> : never) : never;
type MessageBody = AgentMessage extends infer M
  ? M extends AgentMessage
    ? Omit<M, "id" | "sessionId" | "parentId" | "createdAt">
    : never
  : never;

/** Stop reasons that end a run with agent_error rather than agent_completed (guarantee 7). */
const LIMIT_ENDINGS: Partial<Record<StopReason, { code: RunErrorCode; message: (o: AgentRunOptions) => string }>> = {
  TIMEOUT: { code: "run_timeout", message: (o) => `the run did not finish within ${o.timeoutMs} ms` },
  MAX_TURNS: { code: "max_turns_reached", message: (o) => `the run used all ${o.maxTurns} model turns` },
};

/**
 * The agent loop: append the prompt, call the model with the history, run the tool calls it asks
 * for through the policy, feed the results back, and repeat until the model stops or a limit,
 * the timeout or an abort ends the run. Every step is appended to the log before anyone sees it.
 * It never throws: every ending is a persisted assistant message plus a terminal event.
 */
export async function runAgent(userText: string, options: AgentRunOptions, ctx: RunContext): Promise<RunOutcome> {
  return new AgentRun(userText, options, ctx).run();
}

class AgentRun {
  private readonly messages: AgentMessage[];
  private readonly signal: AbortSignal;
  private readonly timeout = new AbortController();
  private toolBudgetLeft = true;
  private model: ModelClient | null = null;
  private tools: ToolRunner | null = null;
  private readonly tracer: RunTracer;
  private turn: TurnTrace | null = null;
  /** When the timeout fires (Date.now clock, as the timer): model clients do not start a retry wait past it. */
  private deadlineAt = 0;
  private readonly budget: ContextBudget;
  private readonly price: ModelPrice | null;
  /** Tool call ids the session's history already holds: a model that repeats one (some servers count from call_0 every turn) gets a fresh id. */
  private readonly callIds = new Set<string>();

  constructor(
    private readonly userText: string,
    private readonly options: AgentRunOptions,
    private readonly ctx: RunContext,
  ) {
    this.messages = [...ctx.history];
    for (const message of this.messages)
      if (message.kind === "assistant") for (const call of message.toolCalls ?? []) this.callIds.add(call.id);
    this.budget = ctx.budget ?? (ctx.setup.ok ? ctx.setup.budget : undefined) ?? contextBudget(DEFAULT_CONTEXT_WINDOW_TOKENS);
    this.price = ctx.price ?? (ctx.setup.ok ? ctx.setup.price : undefined) ?? null;
    this.signal = AbortSignal.any([ctx.signal, this.timeout.signal]);
    this.tracer = new RunTracer({
      sessionId: ctx.sessionId,
      runId: ctx.runId,
      retryOf: ctx.retryOf ?? null,
      ids: ctx.ids,
      clock: ctx.clock,
      append: (draft) => ctx.log.appendTrace(draft),
    });
  }

  async run(): Promise<RunOutcome> {
    this.deadlineAt = Date.now() + this.options.timeoutMs;
    const timer = setTimeout(() => this.timeout.abort(), this.options.timeoutMs);
    try {
      return await this.loop();
    } catch (err) {
      // A bug or a storage failure: still end the run visibly if the log accepts it, and leave a trace.
      logLine("error", "run failed unexpectedly", {
        sessionId: this.ctx.sessionId,
        runId: this.ctx.runId,
        error: String(err),
        stack: (err as Error).stack,
      });
      return this.fail("internal_error", `the run failed unexpectedly: ${(err as Error).message}`, "");
    } finally {
      clearTimeout(timer);
    }
  }

  private async loop(): Promise<RunOutcome> {
    if (!this.ctx.startAnnounced) this.event({ type: "agent_started", runId: this.ctx.runId });
    this.tracer.runStarted();
    this.userMessage(this.userText, this.ctx.userMessageId ?? this.ctx.ids.next("message"));
    const brief = this.ctx.brief ?? null;
    if (brief) {
      this.event({ type: "brief_injected", runId: this.ctx.runId, caseIds: brief.caseIds, text: brief.text });
      this.tracer.memoryRead(brief.caseIds, brief.promotedCaseIds, brief.text.length);
    }
    const setup = this.ctx.setup;
    if (!setup.ok) {
      this.assistant(this.ctx.ids.next("message"), { text: "", stopReason: "ERROR" });
      return this.terminal("ERROR", { code: setup.code, message: setup.message });
    }
    this.model = setup.model;
    this.tools = setup.tools;
    const definitions = this.tools?.definitions() ?? [];
    const system = appendBrief(buildSystemPrompt({ workspaceId: this.ctx.workspaceId, tools: definitions, options: this.options }), brief);

    for (let turn = 1; turn <= this.options.maxTurns; turn++) {
      if (this.signal.aborted) return this.end(this.abortReason(), "");
      if (turn > 1) this.deliverSteering();
      this.turn = this.tracer.turnStarted();
      // The last turn, or one after the tool calls are used up, is for the answer: the tools stay
      // described (the history may hold calls) but may not be called.
      const mayCall = this.toolBudgetLeft && (this.tools?.callCount ?? 0) < this.options.maxToolCalls && turn < this.options.maxTurns;
      const offered = definitions;
      const fixedTokens = estimateFixedTokens(system, offered);
      // Compact before a call the estimate says would not leave room for the answer.
      if (
        estimateContextTokens(modelView(this.messages, this.budget), fixedTokens) >
        this.budget.contextWindow - this.budget.reserveTokens
      ) {
        const compacted = await this.compact("threshold", fixedTokens);
        if (compacted !== "compacted" && compacted !== "nothing_to_compact") return compacted;
      }
      const modelAction = this.tracer.modelCalled(
        this.turn,
        modelView(this.messages, this.budget).messages.length,
        mayCall ? offered.length : 0,
      );
      let { messageId, reply } = await this.turnCall(system, offered, mayCall);
      if (reply.end.type === "error" && reply.end.code === "context_overflow") {
        // The provider says it does not fit: compact, then try the same call once more.
        const compacted = await this.compact("overflow", fixedTokens);
        if (compacted === "compacted") ({ messageId, reply } = await this.turnCall(system, offered, mayCall));
        else if (compacted !== "nothing_to_compact") return compacted;
      }
      const modelError = reply.end.type === "error" ? reply.end.code : null;
      // The run's time ran out before the provider sent any of its answer: the provider's doing, not the
      // agent's. A tool call it had begun is an answer under way (hunt 105: a slow `write` of a long file).
      const unanswered =
        modelError === "aborted" &&
        this.abortReason() === "TIMEOUT" &&
        !reply.text &&
        !reply.thinking &&
        reply.calls.length === 0 &&
        !(reply.end.type === "error" && reply.end.begunCalls);
      this.tracer.modelAnswered(this.turn, modelAction, {
        error: unanswered ? PROVIDER_TIMEOUT : modelError,
        text: reply.text,
        calls: reply.calls.length,
      });

      if (reply.end.type === "error") {
        const { code, message } = reply.end;
        if (code === "aborted") {
          this.assistant(messageId, { text: reply.text, stopReason: this.abortReason(), usage: reply.usage, thinking: reply.thinking });
          const silence = unanswered
            ? {
                code: "run_timeout" as const,
                message: `${LIMIT_ENDINGS.TIMEOUT!.message(this.options)}: the provider sent nothing of its answer in that time`,
              }
            : undefined;
          return this.terminal(this.abortReason(), silence);
        }
        // An answer cut at the output limit ended for its length, and the run fails visibly.
        const stopReason = code === "output_too_large" ? "LENGTH" : "ERROR";
        this.assistant(messageId, { text: reply.text, stopReason, usage: reply.usage, thinking: reply.thinking });
        return this.terminal(stopReason, { code, message });
      }
      const stopReason = reply.calls.length > 0 ? "TOOL_CALLS" : reply.end.stopReason;
      this.assistant(messageId, {
        text: reply.text,
        stopReason,
        toolCalls: reply.calls.length > 0 ? reply.calls : undefined,
        usage: reply.end.usage ?? reply.usage,
        thinking: reply.thinking,
        thinkingField: reply.end.thinkingField,
      });
      if (stopReason !== "TOOL_CALLS") {
        // The model would stop, but steering arrived: it gets another turn to answer it (as pi does).
        if (stopReason === "STOP" && turn < this.options.maxTurns && this.deliverSteering() > 0) {
          this.tracer.turnEnded(this.turn, stopReason, false);
          this.turn = null;
          continue;
        }
        return this.terminal(stopReason);
      }

      for (const call of reply.calls) {
        // A call served from memory (a cached file) never waits on I/O: without a turn between
        // calls, the run's timeout, an abort and every other request on the isolate waited for the
        // whole batch (hunt 72: 60 reads of a 15 MiB file held it 9.8 s past a 1 s timeout).
        await eventLoopTurn();
        await this.runTool(call, reply.invalid.get(call.id));
      }
      if (this.signal.aborted) return this.end(this.abortReason(), "");
      this.tracer.turnEnded(this.turn, "TOOL_CALLS", false);
      this.turn = null;
    }
    return this.end("MAX_TURNS", "");
  }

  /** Appends the steering messages waiting now as user messages; returns how many. */
  private deliverSteering(): number {
    const steering = this.ctx.takeSteering?.() ?? [];
    for (const { messageId, text } of steering) this.userMessage(text, messageId);
    return steering.length;
  }

  /** One model call with the history as the model sees it (the latest summary plus the kept messages). */
  private async turnCall(system: string, tools: ReturnType<ToolRunner["definitions"]>, mayCall: boolean) {
    const messageId = this.ctx.ids.next("message");
    const text = new DeltaCoalescer((delta) => this.event({ type: "assistant_delta", messageId, text: delta }), this.ctx.clock);
    const thinking = new DeltaCoalescer((delta) => this.event({ type: "thinking_delta", messageId, text: delta }), this.ctx.clock);
    const assistantTurns = (this.ctx.assistantsBefore ?? 0) + this.messages.filter((m) => m.kind === "assistant").length;
    const request: ModelRequest = {
      system,
      messages: modelView(this.messages, this.budget).messages,
      tools,
      ...(mayCall ? {} : { toolChoice: "none" as const }),
      assistantTurns,
      deadlineAt: this.deadlineAt,
    };
    // While the model answers, the tools use the wait (the first grep of a fresh object then finds
    // the workspace's text cached); the warm-up stops when the answer is in. It starts only once the
    // model has taken WARM_UP_AFTER_MS: a model that answers at once (a replay) would abort every
    // warm-up just after its first reads had started, and those reads would be wasted.
    const warming = new AbortController();
    const warmUp = () => this.tools?.warmUp?.(AbortSignal.any([warming.signal, this.signal])).catch(() => {});
    const warmUpTimer = mayCall && tools.length > 0 && this.tools?.warmUp ? setTimeout(warmUp, WARM_UP_AFTER_MS) : null;
    let reply: Awaited<ReturnType<AgentRun["callModel"]>>;
    try {
      reply = await this.callModel(request, text, thinking);
    } finally {
      if (warmUpTimer !== null) clearTimeout(warmUpTimer);
      warming.abort();
    }
    thinking.flush();
    text.flush();
    return { messageId, reply };
  }

  /**
   * Compacts the history for the next call: "compacted" (the run goes on), "nothing_to_compact" (every
   * message is recent: nothing is logged and the call goes ahead as it is), else the run's ending:
   * aborted, or `context_overflow` after `compaction_failed`.
   */
  private async compact(reason: CompactionReason, fixedTokens: number): Promise<RunOutcome | "compacted" | "nothing_to_compact"> {
    const result = await compact(
      {
        history: this.messages,
        model: this.model!,
        budget: this.budget,
        fixedTokens,
        signal: this.signal,
        price: this.price,
        assistantTurns: (this.ctx.assistantsBefore ?? 0) + this.messages.filter((m) => m.kind === "assistant").length,
        abortedAs: () => (this.abortReason() === "TIMEOUT" ? "run_timeout" : "run_aborted"),
      },
      reason,
      {
        event: (body) => this.event(body),
        append: (record) => this.message(record) as CompactionMessage,
      },
    );
    if (result.ok) return "compacted";
    // Too short to summarise: `compact` refused before any event, and the call goes ahead as it is.
    if (result.code === "nothing_to_compact") return "nothing_to_compact";
    if (result.code === "aborted" || this.signal.aborted) return this.end(this.abortReason(), "");
    this.assistant(this.ctx.ids.next("message"), { text: "", stopReason: "ERROR" });
    const why = reason === "overflow" ? "the provider said the request does not fit" : "the history passed the context threshold";
    return this.terminal("ERROR", {
      code: "context_overflow",
      message: `${why} (context window ${this.budget.contextWindow} tokens) and compaction failed (${result.code as ErrorCode}): ${result.message}`,
    });
  }

  private async callModel(request: ModelRequest, coalescer: DeltaCoalescer, thinkingCoalescer: DeltaCoalescer) {
    let text = "";
    let thinking = "";
    const calls: ToolCall[] = [];
    const invalid = new Map<string, InvalidToolCall>();
    let end: Extract<ModelEvent, { type: "done" | "error" }> | null = null;
    let usage: Usage | undefined;
    for await (const event of this.model!.stream(request, this.signal)) {
      if (end) break;
      switch (event.type) {
        case "text_delta":
          text += event.text;
          coalescer.push(event.text);
          break;
        case "reasoning_delta":
          // Thinking is kept beside the answer, never in it.
          thinking += event.text;
          thinkingCoalescer.push(event.text);
          break;
        case "tool_call": {
          // One id names one call in the log, the trace and the viewer, across turns too.
          const call = wellFormedCall(this.callIds.has(event.call.id) ? { ...event.call, id: this.ctx.ids.next("toolCall") } : event.call);
          this.callIds.add(call.id);
          calls.push(call);
          if (event.invalid) invalid.set(call.id, event.invalid);
          break;
        }
        case "done":
          usage = event.usage;
          end = event;
          break;
        case "error":
          end = event;
          break;
        case "retry":
          this.event({ type: "model_retry", runId: this.ctx.runId, ...event.retry });
          break;
      }
    }
    end ??= { type: "error", code: "stream_incomplete", message: "the model stream ended without a result" };
    // A provider may send a lone surrogate (a pair split across deltas is whole again here).
    return { text: wellFormed(text), thinking: wellFormed(thinking), calls, invalid, end, usage };
  }

  private async runTool(call: ToolCall, invalid: InvalidToolCall | undefined): Promise<void> {
    if (this.signal.aborted) {
      // Keep the history well-formed: every call gets a result, even the ones we no longer run.
      this.message({
        kind: "tool_result",
        toolCallId: call.id,
        toolName: call.name,
        resultText: `not executed: the run was ${this.abortReason() === "TIMEOUT" ? "timed out" : "aborted"}`,
        error: true,
      });
      return;
    }
    this.event({ type: "tool_call_started", callId: call.id, tool: call.name, arguments: call.arguments });
    const turn = this.turn!;
    const action = this.tracer.toolCalled(turn, call, this.tools?.plannedPaths?.(call) ?? { reads: [], writes: [] });
    const execution = await this.execute(call, invalid);
    this.tracer.toolFinished(turn, action, execution);
    // The result's id is taken first, so tool_call_finished can name the message that follows it.
    const resultId = this.ctx.ids.next("message");
    let ended: AgentEvent;
    if (execution.outcome === "denied") {
      if (execution.reason === "tool_budget_exhausted") this.toolBudgetLeft = false;
      ended = this.eventRecord({ type: "tool_call_denied", callId: call.id, tool: call.name, reason: execution.reason });
    } else {
      ended = this.eventRecord({
        type: "tool_call_finished",
        callId: call.id,
        tool: call.name,
        error: execution.error,
        messageId: resultId,
        summary: toolResultSummary(execution.text),
      });
    }
    const error = execution.outcome === "denied" || execution.error;
    const resultText = fitToolResult(execution.text, this.budget.maxResultTokens);
    const result = this.messageRecord({ kind: "tool_result", toolCallId: call.id, toolName: call.name, resultText, error }, resultId);
    // The call's end and its result are stored in one commit.
    this.ctx.log.appendTogether([
      { stream: "events", record: ended },
      { stream: "messages", record: result },
    ]);
    this.messages.push(result);
  }

  private async execute(call: ToolCall, invalid: InvalidToolCall | undefined): Promise<ToolExecution> {
    if (invalid) {
      const reason = invalid.code === "missing_tool_name" ? "unknown_tool" : "invalid_arguments";
      return { outcome: "denied", reason, text: `${reason}: ${invalid.message}` };
    }
    if (!this.tools)
      return {
        outcome: "denied",
        reason: "unknown_tool",
        text: `unknown_tool: '${call.name}' is not available: this session has no workspace, so it has no tools`,
      };
    try {
      return await this.tools.execute(call, this.signal);
    } catch (err) {
      return { outcome: "finished", text: `internal_error: the tool failed unexpectedly: ${(err as Error).message}`, error: true };
    }
  }

  /** Ends the run between turns: a synthetic assistant message records why. */
  private end(stopReason: StopReason, text: string): RunOutcome {
    this.assistant(this.ctx.ids.next("message"), { text, stopReason });
    return this.terminal(stopReason);
  }

  private fail(code: RunErrorCode, message: string, text: string): RunOutcome {
    try {
      this.assistant(this.ctx.ids.next("message"), { text, stopReason: "ERROR" });
      this.tracer.runEnded(code, true);
      this.event({ type: "agent_error", runId: this.ctx.runId, code, message });
    } catch {
      // The log itself is failing; the caller records the run as ended.
    }
    return { stopReason: "ERROR", error: { code, message } };
  }

  private terminal(stopReason: StopReason, error?: { code: RunErrorCode; message: string }): RunOutcome {
    const ending = LIMIT_ENDINGS[stopReason];
    const failure = error ?? (ending && { code: ending.code, message: ending.message(this.options) });
    if (this.turn) this.tracer.turnEnded(this.turn, stopReason, failure !== undefined);
    this.turn = null;
    // The run's span closes before its terminal event: the judges see the span, clients the event.
    this.tracer.runEnded(failure ? failure.code : stopReason, failure !== undefined);
    if (failure) {
      this.event({ type: "agent_error", runId: this.ctx.runId, ...failure });
      return { stopReason, error: failure };
    }
    this.event({ type: "agent_completed", runId: this.ctx.runId, stopReason });
    return { stopReason };
  }

  private abortReason(): StopReason {
    return this.ctx.signal.aborted ? "ABORTED" : "TIMEOUT";
  }

  private assistant(
    id: string,
    body: {
      text: string;
      stopReason: StopReason;
      toolCalls?: ToolCall[];
      usage?: Usage;
      thinking?: string;
      thinkingField?: "reasoning_content";
    },
  ): void {
    const price = this.price;
    const message: AssistantMessage = {
      kind: "assistant",
      id,
      sessionId: this.ctx.sessionId,
      parentId: this.lastMessageId(),
      createdAt: nowIso(this.ctx.clock),
      text: body.text,
      stopReason: body.stopReason,
      ...(body.toolCalls ? { toolCalls: body.toolCalls } : {}),
      ...(body.usage ? { usage: body.usage } : {}),
      ...(body.usage && price ? { cost: costOf(body.usage, price) } : {}),
      ...(body.thinking ? { thinking: body.thinking } : {}),
      ...(body.thinkingField ? { thinkingField: body.thinkingField } : {}),
    };
    this.appendWithEvent(message, { type: "assistant_completed", messageId: id, stopReason: body.stopReason });
  }

  /** A user message (the prompt, or a steering message) and its `user_message_appended`. */
  private userMessage(text: string, id: string): void {
    this.appendWithEvent(this.messageRecord({ kind: "user", text }, id), { type: "user_message_appended", messageId: id });
  }

  /** A message and the event that announces it, stored in one commit. */
  private appendWithEvent(message: AgentMessage, body: EventBody): void {
    this.ctx.log.appendTogether([
      { stream: "messages", record: message },
      { stream: "events", record: this.eventRecord(body) },
    ]);
    this.messages.push(message);
  }

  private message(body: MessageBody, id = this.ctx.ids.next("message")): AgentMessage {
    const message = this.messageRecord(body, id);
    this.ctx.log.appendMessage(message);
    this.messages.push(message);
    return message;
  }

  private messageRecord(body: MessageBody, id: string): AgentMessage {
    // `kind` first, then the envelope, then the body: the order of a message in every log and export.
    const { kind, ...rest } = body;
    return {
      kind,
      id,
      sessionId: this.ctx.sessionId,
      parentId: this.lastMessageId(),
      createdAt: nowIso(this.ctx.clock),
      ...rest,
    } as AgentMessage;
  }

  private event(body: EventBody): void {
    this.ctx.log.appendEvent(this.eventRecord(body));
  }

  private eventRecord(body: EventBody): AgentEvent {
    return {
      eventId: this.ctx.ids.next("event"),
      sessionId: this.ctx.sessionId,
      createdAt: nowIso(this.ctx.clock),
      ...body,
    } as AgentEvent;
  }

  private lastMessageId(): string | null {
    return this.messages.length > 0 ? this.messages[this.messages.length - 1]!.id : null;
  }
}

/** A tool call with well-formed text throughout: its id, name and arguments are stored and sent back to the provider. */
function wellFormedCall(call: ToolCall): ToolCall {
  const extra = call.extraContent ? { extraContent: wellFormedJson(call.extraContent) } : {};
  return { id: wellFormed(call.id), name: wellFormed(call.name), arguments: wellFormedJson(call.arguments), ...extra };
}
