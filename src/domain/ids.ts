import { z } from "zod";

/** The readable prefix of every id kind (`s_…` session, `m_…` message, …). */
export const ID_PREFIX = {
  session: "s",
  message: "m",
  event: "e",
  toolCall: "tc",
  run: "r",
  workspace: "w",
  project: "p",
  span: "sp",
  turn: "t",
  action: "ac",
  judge: "jd",
  attribution: "at",
  case: "cs",
  scorecard: "sc",
  import: "im",
} as const;

export type IdKind = keyof typeof ID_PREFIX;

/** Produces new ids; injectable so tests are deterministic. */
export interface IdGenerator {
  next(kind: IdKind): string;
}

const ID_BODY_MAX_CHARS = 64;

/** What an id of `kind` is, in the words of the errors that refuse one: `'s_' followed by 1-64 characters of [A-Za-z0-9_-]`. */
export function idForm(kind: IdKind): string {
  return `'${ID_PREFIX[kind]}_' followed by 1-${ID_BODY_MAX_CHARS} characters of [A-Za-z0-9_-]`;
}

/** A schema for ids of one kind: the prefix, `_`, then 1-64 characters of [A-Za-z0-9_-]. */
export function idSchema(kind: IdKind) {
  const prefix = `${ID_PREFIX[kind]}_`;
  return z.string().regex(new RegExp(`^${prefix}[A-Za-z0-9_-]{1,${ID_BODY_MAX_CHARS}}$`), { message: `must be ${idForm(kind)}` });
}

export const SessionId = idSchema("session");
export const WorkspaceId = idSchema("workspace");
export const ProjectId = idSchema("project");
export const RunId = idSchema("run");
export const MessageId = idSchema("message");

/** True when `value` is a well-formed id of `kind`; used to refuse ids before touching storage. */
export function isId(kind: IdKind, value: unknown): value is string {
  return idSchema(kind).safeParse(value).success;
}

const CROCKFORD = "0123456789abcdefghjkmnpqrstvwxyz";

/**
 * Production ids: a 48-bit millisecond time followed by 80 random bits, base32 (26 chars), so ids of
 * one kind sort by creation time and never collide in practice.
 */
export const randomIds: IdGenerator = {
  next(kind) {
    let time = Date.now();
    let stamp = "";
    for (let i = 0; i < 10; i++) {
      stamp = CROCKFORD[time % 32] + stamp;
      time = Math.floor(time / 32);
    }
    const random = crypto.getRandomValues(new Uint8Array(16));
    let tail = "";
    for (let i = 0; i < 16; i++) tail += CROCKFORD[random[i]! % 32];
    return `${ID_PREFIX[kind]}_${stamp}${tail}`;
  },
};

/** Deterministic ids (`m_1`, `m_2`, …; one counter per kind) for tests and replays. */
export function counterIds(): IdGenerator {
  const counters = new Map<IdKind, number>();
  return {
    next(kind) {
      const n = (counters.get(kind) ?? 0) + 1;
      counters.set(kind, n);
      return `${ID_PREFIX[kind]}_${n}`;
    },
  };
}
