import { AsyncLocalStorage } from "node:async_hooks";

/**
 * The deadline of the bash call running in this async context. One step of a command (a regex
 * replace over a long line) gives the call's timer no turn until it ends; just-bash's regex loops are
 * patched (`patches/`) to ask `globalThis.__piHarnessStepOverdue` between matches and to stop the
 * command as aborted once it says so (hunt 107: `s/a*b|a/x/g` over 10,000 characters ran 17-20 s past
 * a 10 s timeout). Calls of several sessions interleave in one isolate: each asks its own context's.
 * Deployed on Cloudflare, `Date.now()` advances only after I/O (a Spectre mitigation), so there the
 * check never fires inside one step: it bounds the step under `wrangler dev` and a self-hosted workerd.
 */
export interface StepDeadline {
  readonly at: number;
  /** A regex loop found the deadline passed and stopped the command. */
  overdue: boolean;
}

const running = new AsyncLocalStorage<StepDeadline>();

(globalThis as { __piHarnessStepOverdue?: () => boolean }).__piHarnessStepOverdue = () => {
  const deadline = running.getStore();
  if (deadline === undefined || Date.now() <= deadline.at) return false;
  deadline.overdue = true;
  return true;
};

/** Runs `work` under `deadline`, which just-bash's regex loops see. */
export function withStepDeadline<T>(deadline: StepDeadline, work: () => Promise<T>): Promise<T> {
  return running.run(deadline, work);
}
