/**
 * A glob (no leading negation) as an RE2 pattern for a whole canonical workspace path: the same
 * paths as picomatch's regex takes with `dot`, `posix` and the characters `asPlainGlob` escapes, for
 * paths of non-empty segments with no `.` or `..` among them, which is what lets it do without
 * picomatch's look-aheads (RE2 has none).
 * - `*` is any run of characters but `/`; `?` one; `[...]` a class (`!` or `^` first negates; POSIX
 *   names such as `[:alpha:]` inside), never taking `/`.
 * - `**` as a whole segment is any number of segments: `**\/x` also `x`, `a/**` also `a` (not so
 *   `a*\/**`), `a/**\/b` also `a/b`; elsewhere, and `***`, it is `*`.
 * - `{a,b}` alternatives (nested too), `{1..3}` and `{a..c}` ranges of up to 1,000 items; a brace
 *   with neither is the text itself.
 * - `\x` is x; a leading `./` is dropped; every other character is itself.
 */
export function globToRe2(glob: string): string {
  return translateGlob(glob).pattern;
}

/**
 * The glob's RE2 pattern (`globToRe2`) and the texts every path it takes holds: its runs of literal
 * characters outside braces, classes and wildcards, split at `/` (`a/**` also takes `a`). Testing
 * them with `includes` first spares RE2, which is slow in JS, most paths.
 */
export function translateGlob(glob: string): { pattern: string; required: string[] } {
  const relative = glob.replace(/^(?:\.\/)+/, "");
  const translator = new GlobTranslator(relative);
  const pattern = translator.translate(0, relative.length, true);
  return { pattern, required: translator.required };
}

const MAX_RANGE_ITEMS = 1000;
const REGEX_SPECIAL = /[\\.+*?()|[\]{}^$]/g;

class GlobTranslator {
  /** The literal runs of the whole glob (`top`), in order. */
  readonly required: string[] = [];

  constructor(private readonly glob: string) {}

  /** The pattern for glob[from, to); `top`: the whole glob, not a brace's alternative, so its literal runs are required. */
  translate(from: number, to: number, top = false): string {
    const g = this.glob;
    let out = "";
    let run = "";
    const endRun = () => {
      if (top && run !== "") this.required.push(run);
      run = "";
    };
    /** Where `out` ended after the last `/` written for a `/` of the glob, and whether a `*` came before that `/`. */
    let afterSlash = -1;
    let slashAfterStar = false;
    for (let i = from; i < to; i++) {
      const c = g[i]!;
      if (c === "/" || c === "*" || c === "?") endRun();
      if (c === "/") {
        out += "/";
        afterSlash = out.length;
        slashAfterStar = i > from && g[i - 1] === "*" && g[i - 2] !== "\\";
      } else if (c === "\\") {
        out += literal(g[i + 1] ?? "\\");
        run += g[i + 1] ?? "\\";
        i++;
      } else if (c === "*") {
        let end = i;
        while (end + 1 < to && g[end + 1] === "*") end++;
        const wholeSegment = end === i + 1 && (i === from || g[i - 1] === "/") && (end + 1 === to || g[end + 1] === "/");
        if (!wholeSegment) out += "[^/]*";
        else if (end + 1 === to) {
          // `**` alone is everything; `a/**` is `a` and all below it (take back the `/` written before),
          // but `a*/**` only what is below (as picomatch reads it).
          if (afterSlash !== out.length) out += ".*";
          else out = `${out.slice(0, -1)}${slashAfterStar ? "/.*" : "(?:/.*)?"}`;
        } else if (/^\*\*(?:\/|$)/.test(g.slice(end + 2, to))) {
          // `**/**` is one `**`: the next one is written (the `/` between them is not).
          i = end + 1;
          continue;
        } else {
          out += "(?:[^/]+/)*";
          end++; // its `/`
        }
        i = end;
      } else if (c === "?") out += "[^/]";
      else if (c === "[") {
        const end = classEnd(g, i);
        if (end === -1 || end >= to) {
          out += "\\[";
          run += "[";
        } else {
          endRun();
          out += classPattern(g.slice(i + 1, end));
          i = end;
        }
      } else if (c === "{") {
        const braced = this.brace(i, to);
        if (braced === null) {
          out += "\\{";
          run += "{";
        } else {
          endRun();
          out += braced.pattern;
          i = braced.end;
        }
      } else {
        out += literal(c);
        run += c;
      }
    }
    endRun();
    return out;
  }

  /** The brace opened at `open`: its alternatives or range, or null when it is text. */
  private brace(open: number, to: number): { pattern: string; end: number } | null {
    const g = this.glob;
    const commas: number[] = [];
    let depth = 0;
    for (let i = open + 1; i < to; i++) {
      const c = g[i];
      if (c === "\\") i++;
      else if (c === "[") i = Math.max(i, classEnd(g, i));
      else if (c === "{") depth++;
      else if (c === "}" && depth > 0) depth--;
      else if (c === "," && depth === 0) commas.push(i);
      else if (c === "}") {
        if (commas.length === 0) {
          const range = rangeItems(g.slice(open + 1, i));
          return range === null ? null : { pattern: `(?:${range.map(literal).join("|")})`, end: i };
        }
        const bounds = [open, ...commas, i];
        const parts = bounds.slice(1).map((end, k) => this.translate(bounds[k]! + 1, end));
        return { pattern: `(?:${parts.join("|")})`, end: i };
      }
    }
    return null;
  }
}

/** `1..3` or `a..c` (a step is not taken): its items, or null. */
function rangeItems(body: string): string[] | null {
  const numbers = /^(-?\d+)\.\.(-?\d+)$/.exec(body);
  if (numbers) {
    const [a, b] = [Number(numbers[1]), Number(numbers[2])];
    if (Math.abs(b - a) >= MAX_RANGE_ITEMS) return null;
    const step = a <= b ? 1 : -1;
    const items: string[] = [];
    for (let n = a; n !== b + step; n += step) items.push(String(n));
    return items;
  }
  const letters = /^([A-Za-z])\.\.([A-Za-z])$/.exec(body);
  if (!letters) return null;
  const [a, b] = [letters[1]!.charCodeAt(0), letters[2]!.charCodeAt(0)];
  const step = a <= b ? 1 : -1;
  const items: string[] = [];
  for (let n = a; n !== b + step; n += step) items.push(String.fromCharCode(n));
  return items;
}

/** A class's inside (between `[` and its `]`) as an RE2 class that never takes `/`. */
export function classPattern(inside: string): string {
  const negated = inside.startsWith("!") || inside.startsWith("^");
  let body = negated ? inside.slice(1) : inside;
  // RE2 reads a `]` first as a member too, but not after `^`; escape it either way.
  if (body.startsWith("]")) body = `\\]${body.slice(1)}`;
  // In a glob `\x` is x; RE2 reads `\z` as an error, `\pL` as the letters and `\a` as the bell.
  body = body.replace(/\\([\s\S])/g, (_, c: string) => (/[!-/:-@[-`{-~]/.test(c) ? `\\${c}` : c));
  return negated ? `[^/${body}]` : `(?:[${body}])`;
}

/**
 * Where the bracket expression opened at `open` ends, or -1 when nothing closes it (a `]` first is a
 * member; a POSIX name such as `[:alpha:]` is skipped whole).
 */
export function classEnd(pattern: string, open: number): number {
  let i = open + 1;
  if (pattern[i] === "!" || pattern[i] === "^") i++;
  if (pattern[i] === "]") i++;
  for (; i < pattern.length; i++) {
    if (pattern[i] === "\\") i++;
    else if (pattern[i] === "[" && pattern[i + 1] === ":") {
      const close = pattern.indexOf(":]", i + 2);
      if (close !== -1) i = close + 1;
    } else if (pattern[i] === "]") return i;
  }
  return -1;
}

export function literal(c: string): string {
  return c.replace(REGEX_SPECIAL, "\\$&");
}
