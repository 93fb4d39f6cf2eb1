import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The bounds of the bash call running in this async context. One step of a command (a regex replace
 * over a long line, a glob over a long string) gives the call's timer no turn until it ends, so
 * just-bash's regex engine is patched (`patches/`) to report its work as it goes, in lots of 65,536
 * steps (NFA thread steps; DFA characters, charged before it reads them), and its callers ask again
 * between matches. What matches leave under a lot gathers in one count for the isolate
 * (`__piHarnessPendingWork`): sed compiles its regex again for every line, so a count kept on the
 * regex lost the work of many short lines (hunt 112). When calls interleave, a lot may land in
 * another call's count: at most 65,535 steps, against bounds of millions. Once either bound is passed the command stops as aborted
 * (hunt 107: `s/a*b|a/x/g` over 10,000 characters ran 17-20 s past a 10 s timeout).
 *
 * Two bounds because deployed on Cloudflare `Date.now()` advances only after I/O (a Spectre
 * mitigation): there the clock stands still inside a step and only the work count stops it. Calls of
 * several sessions interleave in one isolate: each counts in its own context.
 */
export interface StepDeadline {
  readonly at: number;
  /** Regex steps the call may take: the work its timeout allows (`BASH_REGEX_STEPS_PER_MS`). */
  readonly maxWork: number;
  /** Regex steps taken so far by the call's commands. */
  work: number;
  /** What stopped the command, once a check found a bound passed. */
  passed: "time" | "work" | null;
}

const running = new AsyncLocalStorage<StepDeadline>();

/** Adds `units` of regex work to the running call; true once the call is past either bound. */
function passedBound(units: number): boolean {
  const deadline = running.getStore();
  if (deadline === undefined) return false;
  deadline.work += units;
  if (deadline.passed !== null) return true;
  if (deadline.work > deadline.maxWork) deadline.passed = "work";
  else if (Date.now() > deadline.at) deadline.passed = "time";
  return deadline.passed !== null;
}

const hooks = globalThis as { __piHarnessStepOverdue?: () => boolean; __piHarnessStepWork?: (units: number) => boolean };
hooks.__piHarnessStepOverdue = () => passedBound(0);
hooks.__piHarnessStepWork = passedBound;

/** Runs `work` under `deadline`, which just-bash's regex engine reports to. */
export function withStepDeadline<T>(deadline: StepDeadline, work: () => Promise<T>): Promise<T> {
  return running.run(deadline, work);
}
