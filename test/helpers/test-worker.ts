import { env } from "cloudflare:workers";
import type { AppEnv } from "../../src/env";
import app from "../../src/index";
import { productionSessionDeps, type SessionDeps } from "../../src/session/session-deps";
import { SessionDO as ProductionSessionDO } from "../../src/session/session-do";

/**
 * The Worker the tests run (vitest.config.ts `main`): the production app, and a SessionDO that is
 * constructed with test dependencies. Each session's dependencies can be replaced by a test with
 * `useSessionDeps`; the object reads them at every use, so it works before or after the object exists.
 */
export default app;
export { ProjectDO } from "../../src/awtl/project-do";
export { TenantDO } from "../../src/tenant/tenant-do";

const overrides = new Map<string, Partial<SessionDeps>>();

/** From now on, the object of `sessionId` uses these dependencies (the rest stay the production ones). */
export function useSessionDeps(sessionId: string, deps: Partial<SessionDeps>): void {
  const key = env.SESSIONS.idFromName(sessionId).toString();
  overrides.set(key, { ...overrides.get(key), ...deps });
}

export class SessionDO extends ProductionSessionDO {
  constructor(ctx: DurableObjectState, env: AppEnv) {
    const key = ctx.id.toString();
    const base = productionSessionDeps(env);
    const pick = <K extends keyof SessionDeps>(name: K): SessionDeps[K] => overrides.get(key)?.[name] ?? base[name];
    const bucket = new Proxy({} as R2Bucket, {
      get(_target, property) {
        const current = pick("bucket") as unknown as Record<PropertyKey, unknown>;
        const value = current[property];
        return typeof value === "function" ? value.bind(current) : value;
      },
    });
    super(ctx, env, {
      ids: { next: (kind) => pick("ids").next(kind) },
      clock: () => pick("clock")(),
      modelFetch: (input, init) => pick("modelFetch")(input, init),
      bucket,
    });
  }
}
