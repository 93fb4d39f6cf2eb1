import { resolveWorkspacePath } from "../workspace/paths";

/**
 * Artifact refs are workspace paths (`src/a.ts`, or `file:src/a.ts`) or opaque refs (`ci:job-12`,
 * `tool:write`). Paths are compared canonically and by directory: `src` overlaps `src/a.ts`.
 */
export function artifactPath(ref: string): string | null {
  const raw = ref.startsWith("file:") ? ref.slice(5) : ref;
  if (SCHEME.test(raw)) return null; // another scheme: not a workspace path
  try {
    return resolveWorkspacePath(raw);
  } catch {
    return null;
  }
}

/** A ref's scheme: two characters at least, so a drive letter (`C:`) is not one. */
const SCHEME = /^[a-z][a-z0-9+.-]+:/i;

/** Whether `ref` is an opaque ref of another scheme (`ci:job-12`), not a workspace path. */
export function isSchemeRef(ref: string): boolean {
  return !ref.startsWith("file:") && SCHEME.test(ref);
}

/** Whether two refs name overlapping things: the same path, one a directory of the other, or equal opaque refs. */
export function overlaps(a: string, b: string): boolean {
  const pa = artifactPath(a);
  const pb = artifactPath(b);
  if (pa === null || pb === null) return a === b;
  return pa === pb || pa === "" || pb === "" || pb.startsWith(`${pa}/`) || pa.startsWith(`${pb}/`);
}

export function overlapsAny(refs: readonly string[], paths: readonly string[]): boolean {
  return refs.some((ref) => paths.some((path) => overlaps(ref, path)));
}

/**
 * Whether a case about `casePath` applies to `path`: the same path, or inside it as a directory. Case
 * paths are the failure's artifacts as written, never patterns: `src/*.ts` (a read a model sent
 * with a glob) or `**` (a judgement's ref) name no other file, and `app/[id]/page.tsx` is one file.
 */
export function coversPath(casePath: string, path: string): boolean {
  return casePath === path || path.startsWith(`${casePath}/`);
}

/**
 * Longest word of a prompt read as a possible path. A longer run (a pasted minified line, a blob, a
 * hash) names no file, and the path pattern backtracks: its cost grows with the square of a word's
 * length (45,000 characters without a space held the isolate for minutes).
 */
export const MAX_PATH_WORD_CHARS = 256;

// A dot-file (`.env`, `.eslintrc.json`) keeps its dot: it was read from the letter after it (hunt 95).
const PATH_TOKEN = /[\w@.-]+(?:\/[\w@.-]+)+\/?|\.?[\w@-]+(?:\.[\w-]+)*\.[A-Za-z][\w]{0,9}\b|(?<![\w@.-])\.[A-Za-z][\w-]*/g;

/** Paths a prompt names: tokens with a slash or a file extension, and dot-files, as workspace paths. */
export function pathsInText(text: string): string[] {
  const found = new Set<string>();
  // Words of the characters a path token can hold: the pattern runs on each short one alone.
  for (const word of text.split(/[^\w@./-]+/)) {
    if (word === "" || word.length > MAX_PATH_WORD_CHARS) continue;
    for (const match of word.matchAll(PATH_TOKEN)) {
      const token = match[0].replace(/[.,;:]+$/, "");
      const path = artifactPath(token);
      if (path) found.add(path);
    }
  }
  return [...found].sort();
}
