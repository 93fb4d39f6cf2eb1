import { DurableObject } from "cloudflare:workers";
import type { AppEnv } from "../env";

/** One per session: the only writer of that session's log (placeholder, being built). */
export class SessionDO extends DurableObject<AppEnv> {}
