import { ToolError } from "./tool";

// The ripgrep and grep habits models bring, read as JavaScript regex syntax.

/**
 * ASCII members of the POSIX classes ripgrep takes inside brackets (`[[:space:]]`), in JavaScript's
 * class syntax. JavaScript alone reads `[[:space:]]` as the class `[[:space]` followed by "]".
 */
const POSIX_CLASSES: ReadonlyMap<string, string> = new Map([
  ["alnum", "0-9A-Za-z"],
  ["alpha", "A-Za-z"],
  ["ascii", "\\x00-\\x7f"],
  ["blank", "\\t "],
  ["cntrl", "\\x00-\\x1f\\x7f"],
  ["digit", "0-9"],
  ["graph", "!-~"],
  ["lower", "a-z"],
  ["print", " -~"],
  ["punct", "!-\\/:-@\\[-`{-~"],
  ["space", "\\t\\n\\v\\f\\r "],
  ["upper", "A-Z"],
  ["word", "0-9A-Za-z_"],
  ["xdigit", "0-9A-Fa-f"],
]);

/**
 * The pattern in JavaScript's syntax, from the grep and ripgrep habits models bring: a leading `(?i)`
 * is ignoreCase, and a POSIX class inside brackets stands for its ASCII members, as in ripgrep.
 */
export function javaScriptSyntax(pattern: string, ignoreCase: boolean): { source: string; ignoreCase: boolean } {
  const flagged = pattern.startsWith("(?i)");
  const body = flagged ? pattern.slice(4) : pattern;
  let source = "";
  let inClass = false;
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c === "\\") {
      source += body.slice(i, i + 2);
      i++;
    } else if (!inClass && c === "[") {
      inClass = true;
      // JavaScript: a class ends at the first unescaped "]" ("[]" is empty, "[^]" any character).
      const start = body[i + 1] === "^" ? 2 : 1;
      source += body.slice(i, i + start);
      i += start - 1;
    } else if (inClass && c === "]") {
      inClass = false;
      source += c;
    } else if (inClass && body.startsWith("[:", i)) {
      const named = /^\[:(\^?)(\w+):\]/.exec(body.slice(i));
      if (!named) source += c;
      else {
        source += posixMembers(pattern, named[0], named[1] === "^", named[2]!);
        i += named[0].length - 1;
      }
    } else source += c;
  }
  return { source, ignoreCase: ignoreCase || flagged };
}

function posixMembers(pattern: string, written: string, negated: boolean, name: string): string {
  const members = POSIX_CLASSES.get(name);
  const refuse = (why: string) => new ToolError("invalid_regex", `invalid regular expression ${JSON.stringify(pattern)}: ${why}`);
  if (members === undefined) {
    throw refuse(`${written} is not a POSIX class; the known ones are ${[...POSIX_CLASSES.keys()].map((n) => `[:${n}:]`).join(", ")}`);
  }
  if (negated) throw refuse(`negated POSIX classes such as ${written} are not supported; write [^[:${name}:]] instead`);
  return members;
}

/** What to do about a pattern JavaScript refused: inline flags other than a leading `(?i)` are named. */
export function refusalAdvice(source: string): string {
  const flags = /(?:^|[^\\])(\(\?[a-zA-Z]*-?[a-zA-Z]*\))/.exec(source)?.[1];
  if (flags === undefined) return "Fix the pattern, or pass literal=true to search for the text as written";
  return (
    `Inline flags such as ${flags} are not supported, only a leading (?i), which means ignoreCase=true: ` +
    "for a case-insensitive search pass ignoreCase=true; (?s) and (?m) are not needed, as every line is matched on its own"
  );
}
