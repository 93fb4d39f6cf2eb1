import { GREP_V8_MAX_WAYS } from "../domain/limits";
import {
  afterQuantifier,
  classEnd,
  escapeAt,
  groupEnd,
  hasTopLevelAlternation,
  leadingAtomEnd,
  leastAt,
  quantifierAt,
} from "./regex-source";

// What a regex's shape tells before it runs: a text every match holds, an equivalent pattern V8 runs
// faster, and the shapes on which a backtracking engine takes time growing past the line's length.

/**
 * The longest text every match holds, read from the pattern's top level: plain characters and escaped
 * punctuation in a row, outside classes and groups, but for a group of plain texts not repeated,
 * which gives what its branches begin and end with (`use(State|Effect)` holds "use", `catch
 * \((e|err)\)` holds "catch (e"). "" when there is none, or when the top level alternates (`a|b`).
 */
export function requiredText(source: string): string {
  let best = "";
  let run = "";
  let depth = 0;
  const end = () => {
    if (run.length > best.length) best = run;
    run = "";
  };
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    const branches = c === "(" && depth === 0 ? plainBranches(source, i) : null;
    if (branches !== null && quantifierAt(source, branches.close + 1) === null) {
      // Each match holds one branch there, right after what comes before and right before what follows.
      const prefix = commonPrefix(branches.texts);
      run += prefix;
      if (branches.texts.some((text) => text.length > prefix.length)) {
        end();
        run = commonSuffix(branches.texts.map((text) => text.slice(prefix.length)));
      }
      i = branches.close + 1;
      continue;
    }
    let piece: string | null = null;
    let next = i + 1;
    if (c === "\\") {
      const escaped = source[i + 1] ?? "";
      if (/^[^0-9A-Za-z\s]$/.test(escaped)) piece = escaped;
      // Other escapes (\d, \x41, \u{...}, \p{...}, \cJ, \1) are not taken apart: the run ends there.
      next = i + escapeAt(source, i).length;
    } else if (c === "[") {
      next = classEnd(source, i) + 1;
    } else if (c === "(") depth++;
    else if (c === ")") depth--;
    else if (c === "|") {
      if (depth === 0) return "";
    } else if (c !== "^" && c !== "$" && c !== "." && quantifierAt(source, i) === null) piece = c;
    const most = quantifierAt(source, next);
    const least = most === null ? 1 : leastAt(source, next);
    if (depth > 0) piece = null;
    if (piece !== null && depth === 0 && least >= 1) run += piece;
    // A repeated character is there at least once, but what follows it may not come right after it.
    if (piece === null || most !== null) end();
    i = most === null ? next : afterQuantifier(source, next);
  }
  end();
  return best;
}

/**
 * The pattern with its repeated first item cut to the least count, again while there is one
 * (`[a-z]+_x` -> `[a-z]_x`, `\s*\w+=` -> `\w=`, `\d{2,}` -> `\d{2}`). A line holds a match of one
 * exactly when it holds a match of the other: the run's last characters match the cut item, and
 * what follows can start wherever it could (look-behinds see the same text). V8 tried the whole run
 * from each of its characters: `[a-z]+_[a-z]+` took 222 ms over the grep bench's tree, rg 57. Not
 * with an alternation at the top (the cut would apply to its first branch only, which is still
 * right but is left alone), nor for a group, an anchor or a back-reference first. Without
 * `cutCounted`, only the items that may be absent go (`\s*\w+=` -> `\w+=`): what the engine is
 * picked on, since `\w+\w+=` cut to `\w\w+=` is as slow on V8 as it was (hunt 91), and only the
 * pair shows it.
 */
export function withoutLeadingRepetition(source: string, cutCounted = true): string {
  if (hasTopLevelAlternation(source)) return source;
  let lean = source;
  for (;;) {
    const end = leadingAtomEnd(lean);
    if (end <= 0 || quantifierAt(lean, end) === null) return lean;
    // The least count as written: `{1000000000000000000000,}` as a number prints as 1e+21, which
    // V8 would read as text (hunt 91).
    const least = /^\{(\d+)/.exec(lean.slice(end))?.[1] ?? (lean[end] === "+" ? "1" : "0");
    const rest = lean.slice(afterQuantifier(lean, end));
    if (Number(least) === 0) {
      lean = rest;
      continue;
    }
    if (!cutCounted) return lean;
    const atom = lean.slice(0, end);
    return (Number(least) === 1 ? atom : `${atom}{${least}}`) + rest;
  }
}

/**
 * Whether the pattern repeats a group that itself repeats or alternates (`(a+)+`, `(a|aa)*`,
 * `(\w+\s?)+`): the shapes on which a backtracking engine can take exponential time. Reads the
 * source as written: escapes and character classes are skipped, so `[(]+` or `\(a|b\)+` are not groups.
 */
export function repeatsAmbiguousGroup(source: string): boolean {
  // Per open group: whether it holds a quantifier or an alternation.
  const open: boolean[] = [];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") {
      i++;
      continue;
    }
    if (c === "[") {
      i = classEnd(source, i);
      continue;
    }
    if (c === "(") {
      open.push(false);
      // Group syntax, not a quantifier: (?: (?= (?! (?<= (?<! (?<name>
      const syntax = /^\?(?::|=|!|<=|<!|<[^>]*>)/.exec(source.slice(i + 1));
      if (syntax) i += syntax[0].length;
    } else if (c === "|") {
      if (open.length > 0) open[open.length - 1] = true;
    } else if (c === ")") {
      const ambiguous = open.pop() ?? false;
      const repeat = quantifierAt(source, i + 1);
      if (ambiguous && repeat !== null && repeat > 1) return true;
      // The enclosing group holds whatever this one held, and this repetition.
      if (open.length > 0 && (ambiguous || repeat !== null)) open[open.length - 1] = true;
    } else if (quantifierAt(source, i) !== null && open.length > 0) open[open.length - 1] = true;
  }
  return false;
}

/**
 * Whether two unbounded repetitions that can match a same character follow each other with only
 * optional items, or items that character can be taken for, between (`-*-*`, `\s*\s+`, `.*\s*=`,
 * `[a-z]+\w*`, `\w*a\w*`): a backtracking engine tries every
 * way to share a run of such characters between them, so each pair multiplies the time by the
 * line's length, and a model picks how many pairs (hunt 70: `-*-*-*-*-*-*y` held the isolate for
 * minutes on a 67-character line). Reads the source as written; a repeated group counts as
 * matching anything, and an alternation starts a new sequence.
 */
export function repeatsOverlappingNeighbours(source: string, ignoreCase: boolean): boolean {
  let previous: Item | null = null;
  for (const item of patternItems(source)) {
    if (item === "|") {
      previous = null;
      continue;
    }
    if (item.unbounded) {
      if (previous && mayShareCharacters(previous.atom, item.atom, ignoreCase)) return true;
      previous = item;
    } else if (!item.optional && previous && !mayShareCharacters(previous.atom, item.atom, ignoreCase)) {
      // An item the repetition's characters cannot be taken for ends its run; one they can be
      // (`\w*a\w*`: the `a` is a word character too) lets the run go on through it.
      previous = null;
    }
  }
  return false;
}

/**
 * Whether items next to each other that can match a same character can share one stretch of a line
 * in more than GREP_V8_MAX_WAYS ways, counting those of bounded repetitions (`\w{0,40}` has 41),
 * optional items and alternatives (`(?:a|\w)?` has 3) and leaving out the run's largest: a
 * backtracking engine tries each way before it gives up on a start, so their counts multiply (hunt
 * 98: 20 of `(?:a|\w)?` in a row held the isolate for 30 s on 4 lines of 61 characters, and six
 * `\w{0,40}` for 15 s on one of 240). Unbounded repetitions count once (repeatsOverlappingNeighbours
 * judges their pairs). A group of plain texts none of which begins another (`(get|set)`) has one
 * way, and so does a group whose items are read as part of the sequence around it (`(ab\w?)`).
 */
export function sharesStretchManyWays(source: string, ignoreCase: boolean): boolean {
  const judging: Judging = { ignoreCase, many: false, shares: new Map() };
  alternativeWays(source, 0, source.length, judging, 0);
  return judging.many;
}

/**
 * The most choices V8 compiles in one sequence of the pattern: repeated items (`a?`, `\w+`,
 * `(ab){2}`) and groups of alternatives (`(ab|cd)`) one after another, the alternatives of a group
 * or of the pattern counting as their longest. V8's compile time grows with about the square of
 * such a sequence (128 `(ab|cd)` in a row took 23-53 ms, 2,340 took 2 s, and a grep compiles twice),
 * and only about linearly with alternatives side by side (500 of `\bname\s*\(` took 44 ms).
 */
export function compiledChoices(source: string): number {
  /** Per open group (the pattern's at the bottom): choices of its current alternative, its longest so far, whether it alternates. */
  const open = [{ sequence: 0, longest: 0, alternates: false }];
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    const top = open[open.length - 1]!;
    let choices = 0;
    if (c === "\\") {
      i += escapeAt(source, i).length - 1;
    } else if (c === "[") {
      i = classEnd(source, i);
    } else if (c === "(") {
      open.push({ sequence: 0, longest: 0, alternates: false });
      i += /^\((?:\?(?::|=|!|<=|<!|<[^>]*>))?/.exec(source.slice(i, i + 256))![0].length - 1;
      continue;
    } else if (c === "|") {
      top.longest = Math.max(top.longest, top.sequence);
      top.sequence = 0;
      top.alternates = true;
      continue;
    } else if (c === ")" && open.length > 1) {
      const group = open.pop()!;
      choices = Math.max(group.longest, group.sequence) + Number(group.alternates);
    }
    if (quantifierAt(source, i + 1) !== null) {
      choices++;
      i = afterQuantifier(source, i + 1) - 1;
    }
    open[open.length - 1]!.sequence += choices;
  }
  const pattern = open[0]!;
  return Math.max(pattern.longest, pattern.sequence);
}

/** Past this, counts of ways are all "too many". */
const WAYS_CAP = 1e9;
/** Groups nested deeper than this are not read: the pattern counts as having too many ways (and RE2 judges it). */
const MAX_JUDGED_DEPTH = 64;

/** What `sharesStretchManyWays` learns as it reads: whether a run has too many ways, and which atoms share characters. */
interface Judging {
  readonly ignoreCase: boolean;
  many: boolean;
  readonly shares: Map<string, boolean>;
}

/** The ways the alternatives in [from, to) can match one stretch: their sum. Sets `judging.many` for a run of too many inside. */
function alternativeWays(source: string, from: number, to: number, judging: Judging, depth: number): number {
  if (depth > MAX_JUDGED_DEPTH) {
    judging.many = true;
    return WAYS_CAP;
  }
  let ways = 0;
  let start = from;
  for (let i = from; i <= to; i++) {
    const c = source[i];
    if (i < to && c === "\\") i++;
    else if (i < to && c === "[") i = classEnd(source, i);
    else if (i < to && c === "(") i = groupEnd(source, i);
    else if (i === to || c === "|") {
      ways = Math.min(WAYS_CAP, ways + sequenceWays(source, start, i, judging, depth));
      start = i + 1;
    }
  }
  return ways;
}

/**
 * The ways the sequence in [from, to) can match one stretch (the product of its items'), judging
 * each run of items that can match a same character, where the items' ways multiply.
 */
function sequenceWays(source: string, from: number, to: number, judging: Judging, depth: number): number {
  let ways = 1;
  /** The run's bounded counts: their product and the largest. */
  let product = 1;
  let largest = 1;
  /** The last item's atom (null: a group, which may match anything); undefined before the first. */
  let previous: string | null | undefined;
  const endRun = () => {
    if (product / largest > GREP_V8_MAX_WAYS) judging.many = true;
    product = 1;
    largest = 1;
  };
  for (let i = from; i < to; ) {
    const c = source[i]!;
    if (c === ")" || c === "^" || c === "$") {
      // The end of a group read as part of the sequence, or an anchor: no character.
      i++;
      continue;
    }
    let atom: string | null;
    let end: number;
    let inner = 1;
    if (c === "(") {
      const close = groupEnd(source, i);
      if (/^\(\?<?[=!]/.test(source.slice(i, i + 4))) {
        // A look-around matches no character; its own inside is judged as a pattern.
        alternativeWays(source, i + /^\(\?<?[=!]/.exec(source.slice(i, i + 4))![0].length, close, judging, depth + 1);
        i = close + 1;
        if (quantifierAt(source, i) !== null) i = afterQuantifier(source, i);
        continue;
      }
      const syntax = /^\((?:\?(?::|<[^>]*>))?/.exec(source.slice(i))![0];
      const body = source.slice(i + syntax.length, close);
      if (quantifierAt(source, close + 1) === null && !hasTopLevelAlternation(body)) {
        // Neither repeated nor alternating: its items are part of the sequence.
        i += syntax.length;
        continue;
      }
      const plain = plainBranches(source, i);
      inner =
        plain && !beginsAnother(plain.texts, judging.ignoreCase)
          ? 1
          : alternativeWays(source, i + syntax.length, close, judging, depth + 1);
      atom = null;
      end = close + 1;
    } else {
      const read = atomAt(source, i);
      if (read === null) {
        i += 2;
        continue;
      }
      ({ atom, end } = read);
    }
    const most = quantifierAt(source, end);
    const least = most === null ? 1 : leastAt(source, end);
    const count = most === null ? inner : repeatedWays(inner, least, most);
    i = most === null ? end : afterQuantifier(source, end);
    ways = Math.min(WAYS_CAP, ways * count);
    if (previous !== undefined && !sharesCharacters(previous, atom, judging)) {
      // An item that may be absent leaves its neighbours next to each other (`\w{0,40}-?\w{0,40}`,
      // hunt 100): the run goes on past it, as if it were not there.
      if (least === 0) continue;
      endRun();
    }
    if (count > 1 && count < Number.POSITIVE_INFINITY) {
      product = Math.min(WAYS_CAP, product * count);
      largest = Math.max(largest, count);
    }
    previous = atom;
  }
  endRun();
  return ways;
}

/** `mayShareCharacters`, once per pair of atoms in a pattern (a pattern of 16 Ki characters has thousands of pairs). */
function sharesCharacters(a: string | null, b: string | null, judging: Judging): boolean {
  if (a === null || b === null) return true;
  const key = `${a}\u0000${b}`;
  let shares = judging.shares.get(key);
  if (shares === undefined) {
    shares = mayShareCharacters(a, b, judging.ignoreCase);
    judging.shares.set(key, shares);
  }
  return shares;
}

/** The ways `least` to `most` repetitions of an item of `inner` ways can match a stretch. */
function repeatedWays(inner: number, least: number, most: number): number {
  if (most === Number.POSITIVE_INFINITY) return most;
  let ways = 0;
  for (let n = least; n <= most && ways < WAYS_CAP; n++) ways += Math.min(WAYS_CAP, inner ** n);
  return Math.min(WAYS_CAP, ways);
}

/**
 * Whether a text begins another: both can match at one place (`a` and `ab`), so the group has more
 * than one way. Sorted, a text that begins others begins the one after it (a group may hold thousands).
 */
function beginsAnother(texts: string[], ignoreCase: boolean): boolean {
  const sorted = (ignoreCase ? texts.map((t) => t.toLowerCase()) : [...texts]).sort();
  return sorted.some((text, i) => i + 1 < sorted.length && sorted[i + 1]!.startsWith(text));
}

/**
 * The branches of the group opened at `open` when each is plain text (characters and escaped
 * punctuation; `(a|bc)`, `(?:x|\.y)`, `(?<n>a)`), with where the group closes; else null.
 */
function plainBranches(source: string, open: number): { texts: string[]; close: number } | null {
  const syntax = /^\((?:\?:|\?<[A-Za-z_$][\w$]*>)?/.exec(source.slice(open, open + 256))![0];
  const close = groupEnd(source, open);
  if (close >= source.length) return null;
  const texts: string[] = [];
  let text = "";
  for (let i = open + syntax.length; i < close; i++) {
    const c = source[i]!;
    if (c === "|") {
      texts.push(text);
      text = "";
    } else if (c === "\\" && /^[^0-9A-Za-z\s]$/.test(source[i + 1] ?? "")) text += source[++i];
    else if ("\\^$.*+?()[]{}".includes(c)) return null;
    else text += c;
  }
  texts.push(text);
  return { texts, close };
}

function commonPrefix(texts: string[]): string {
  let n = 0;
  while (texts.every((text) => n < text.length && text[n] === texts[0]![n])) n++;
  return texts[0]!.slice(0, n);
}

function commonSuffix(texts: string[]): string {
  let n = 0;
  while (texts.every((text) => n < text.length && text[text.length - 1 - n] === texts[0]![texts[0]!.length - 1 - n])) n++;
  return texts[0]!.slice(texts[0]!.length - n);
}

/** One item of a pattern, as `repeatsOverlappingNeighbours` reads it. */
interface Item {
  /** Its source; null for a repeated group, which may match anything. */
  atom: string | null;
  unbounded: boolean;
  /** It may match nothing (`?`, `*`, `{0,n}`, a look-around, an anchor). */
  optional: boolean;
}

/** The pattern's items in order, groups not repeated read through (their contents are the sequence), "|" where a branch ends. */
function* patternItems(source: string): Generator<Item | "|"> {
  for (let i = 0; i < source.length; ) {
    const c = source[i]!;
    let end: number;
    let atom: string | null;
    if (c === "|") {
      yield "|";
      i++;
      continue;
    }
    if (c === ")") {
      i++;
      continue;
    }
    if (c === "^" || c === "$") {
      yield { atom: null, unbounded: false, optional: true };
      i++;
      continue;
    }
    if (c === "(") {
      const close = groupEnd(source, i);
      const lookaround = /^\(\?<?[=!]/.test(source.slice(i, i + 4));
      if (lookaround) {
        i = close + 1;
        // A quantifier on a look-around changes nothing here: it matches no character either way.
        if (quantifierAt(source, i) !== null) i = afterQuantifier(source, i);
        yield { atom: null, unbounded: false, optional: true };
        continue;
      }
      if (quantifierAt(source, close + 1) === null) {
        // Not repeated: its items are part of the sequence (the group syntax itself is skipped).
        const syntax = /^\((?:\?(?::|<[^>]*>))?/.exec(source.slice(i))![0];
        i += syntax.length;
        continue;
      }
      end = close + 1;
      atom = null;
    } else {
      const read = atomAt(source, i);
      if (read === null) {
        yield { atom: null, unbounded: false, optional: true };
        i += 2;
        continue;
      }
      ({ atom, end } = read);
    }
    const most = quantifierAt(source, end);
    const least = most === null ? 1 : leastAt(source, end);
    yield { atom, unbounded: most === Number.POSITIVE_INFINITY, optional: least === 0 };
    i = most === null ? end : afterQuantifier(source, end);
  }
}

/**
 * The one-character item at `i` (a character, a class, an escape) and where it ends; its atom is null
 * for a back-reference, which matches what its group did: anything. Null for `\b` and `\B`,
 * which match no character.
 */
function atomAt(source: string, i: number): { atom: string | null; end: number } | null {
  const c = source[i]!;
  if (c === "[") {
    const end = classEnd(source, i) + 1;
    return { atom: source.slice(i, end), end };
  }
  if (c !== "\\") return { atom: c, end: i + 1 };
  const escaped = escapeAt(source, i);
  if (escaped === "\\b" || escaped === "\\B") return null;
  return { atom: /^\\(?:[1-9]|k<)/.test(escaped) ? null : escaped, end: i + escaped.length };
}

/** Characters that tell apart the atoms grep patterns use: Latin-1, a few scripts' letters, spaces and line separators. */
const PROBE_CHARACTERS = [
  ...Array.from({ length: 256 }, (_, n) => String.fromCharCode(n)),
  ..."\u0100\u017f\u0391\u03b1\u0410\u0430\u05d0\u0627\u0905\u0e01\u3042\u30a2\u4e00\u4e2d\uac00\u1680\u2000\u2028\u2029\u202f\u205f\u3000\ufeff\u212a\u2126",
];

/** Whether two single-character atoms (null: a group, anything) can match a same character: tried on probes and on the characters they name. */
function mayShareCharacters(a: string | null, b: string | null, ignoreCase: boolean): boolean {
  if (a === null || b === null) return true;
  let first: RegExp;
  let second: RegExp;
  try {
    first = new RegExp(`^(?:${a})$`, ignoreCase ? "i" : "");
    second = new RegExp(`^(?:${b})$`, ignoreCase ? "i" : "");
  } catch {
    return true;
  }
  const named = [...a, ...b].flatMap((ch) => [ch, ch.toLowerCase(), ch.toUpperCase()]);
  return [...PROBE_CHARACTERS, ...named].some((ch) => first.test(ch) && second.test(ch));
}
