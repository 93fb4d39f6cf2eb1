import { type FailureClass, PROVIDER_TIMEOUT } from "../domain";

/** Failures of the world around the agent: the provider (its refusals too), the network, the server's own restarts. */
const ENVIRONMENT_CODES: ReadonlySet<string> = new Set([
  "rate_limited",
  "provider_error",
  "bad_request",
  "content_filtered",
  "network_error",
  "auth_failed",
  "model_not_configured",
  "stream_incomplete",
  "run_interrupted",
  PROVIDER_TIMEOUT,
]);

/** Failures of this service itself. */
const HARNESS_CODES: ReadonlySet<string> = new Set([
  "internal_error",
  "history_unreadable",
  "tool_failed",
  "replay_exhausted",
  "replay_load_failed",
  "replay_recorded_error",
  "script_exhausted",
]);

/** Policy denials (the run's permissions refused the call). The tool budget is a limit, not a policy. */
const POLICY_CODES: ReadonlySet<string> = new Set([
  "write_not_allowed",
  "bash_not_allowed",
  "path_escape",
  "path_too_long",
  "unknown_tool",
  "invalid_arguments",
]);

/** Limits the run hit: the agent spent its budget. */
export const LIMIT_CODES: ReadonlySet<string> = new Set(["max_turns_reached", "run_timeout", "tool_budget_exhausted"]);

export const isPolicyCode = (code: string) => POLICY_CODES.has(code);

/**
 * The class of a failure, decided in this order: `environment`, `flaky` (the same judge passed on an
 * identical replay), `harness`, `policy`, else `agent`. `runEnding` is the code the run itself ended
 * with, which decides for an external verdict on a run that never got to do its work.
 */
export function classifyFailure(failureKind: string, opts: { replayPassed: boolean; runEnding: string | null }): FailureClass {
  const codes = [failureKind, opts.runEnding ?? ""];
  if (codes.some((c) => ENVIRONMENT_CODES.has(c))) return "environment";
  if (opts.replayPassed) return "flaky";
  if (codes.some((c) => HARNESS_CODES.has(c))) return "harness";
  if (POLICY_CODES.has(failureKind)) return "policy";
  return "agent";
}

/** Only these classes become cases: the others say nothing about what the agent should do. */
export function becomesCase(cls: FailureClass): boolean {
  return cls === "agent" || cls === "policy";
}
