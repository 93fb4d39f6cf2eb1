/**
 * A parser for JavaScript regular expressions (no `u` or `v` flag, with the web-compatibility
 * grammar of Annex B), reduced to what the search index needs: which strings a match can consist
 * of. It keeps literal characters and small character classes; everything it does not model
 * exactly becomes a looser node (`any` character, `unknown` string), never a stricter one. Input
 * must already be a valid pattern (`new RegExp` accepted it); anything unexpected throws, and the
 * caller then searches every file.
 */

export type RegexNode =
  /** Matches the empty string: assertions, lookarounds. */
  | { kind: "empty" }
  /** One UTF-16 code unit out of `chars` (already folded, see `CaseFolding`), or any one when null. */
  | { kind: "char"; chars: readonly string[] | null }
  /** Any string at all (back-references, groups with flag modifiers). */
  | { kind: "unknown" }
  | { kind: "concat"; items: RegexNode[] }
  | { kind: "alt"; branches: RegexNode[] }
  | { kind: "repeat"; node: RegexNode; min: number; max: number };

/** Character classes with more members than this are treated as "any character". */
const MAX_CLASS_CHARS = 8;

/**
 * `unicodeFolding`: the pattern runs on RE2, whose `ignoreCase` folds as Unicode does (`k` also
 * matches the Kelvin sign) where JavaScript's (without `u`) keeps ASCII and non-ASCII apart.
 */
export function parseRegex(source: string, ignoreCase: boolean, unicodeFolding = false): RegexNode {
  const folding = !ignoreCase ? CaseFolding.exact : unicodeFolding ? CaseFolding.unicode : CaseFolding.ignoreCase;
  return new Parser(source, folding).parse();
}

/**
 * Whether the pattern names a group (`(?<name>...)`): only then is `\k<name>` a back-reference; in a
 * pattern without one, `\k` is the letter k and `<x|y>` goes on as text and alternation (Annex B).
 */
export function namesGroups(source: string): boolean {
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === "\\") i++;
    else if (c === "[") {
      // A class ends at the first unescaped "]" ("[]" is empty, "[^]" any character).
      for (i += source[i + 1] === "^" ? 2 : 1; i < source.length && source[i] !== "]"; i++) if (source[i] === "\\") i++;
    } else if (c === "(" && source.startsWith("?<", i + 1) && source[i + 3] !== "=" && source[i + 3] !== "!") return true;
  }
  return false;
}

class Parser {
  private i = 0;
  private readonly namedGroups: boolean;

  constructor(
    private readonly src: string,
    private readonly folding: CaseFolding,
  ) {
    this.namedGroups = namesGroups(src);
  }

  parse(): RegexNode {
    const node = this.disjunction();
    if (this.i !== this.src.length) throw new Error(`unexpected '${this.src[this.i]}' at ${this.i}`);
    return node;
  }

  private disjunction(): RegexNode {
    const branches = [this.alternative()];
    while (this.src[this.i] === "|") {
      this.i++;
      branches.push(this.alternative());
    }
    return branches.length === 1 ? branches[0]! : { kind: "alt", branches };
  }

  private alternative(): RegexNode {
    const items: RegexNode[] = [];
    while (this.i < this.src.length && this.src[this.i] !== "|" && this.src[this.i] !== ")") items.push(this.term());
    return { kind: "concat", items };
  }

  private term(): RegexNode {
    const atom = this.atom();
    const quantifier = this.quantifier();
    return quantifier ? { kind: "repeat", node: atom, ...quantifier } : atom;
  }

  private atom(): RegexNode {
    const c = this.src[this.i]!;
    switch (c) {
      case "^":
      case "$":
        this.i++;
        return EMPTY;
      case ".":
        this.i++;
        return ANY_CHAR;
      case "(":
        return this.group();
      case "[":
        return this.characterClass();
      case "\\":
        return this.atomEscape();
      case "*":
      case "+":
      case "?":
        throw new Error(`nothing to repeat at ${this.i}`);
      default:
        this.i++;
        return this.char(c);
    }
  }

  private group(): RegexNode {
    const rest = this.src.slice(this.i, this.i + 4);
    let kind: "capture" | "look" | "unknown" = "capture";
    if (rest.startsWith("(?:")) this.i += 3;
    else if (/^\(\?(<?)[=!]/.test(rest)) {
      this.i += rest[2] === "<" ? 4 : 3;
      kind = "look";
    } else if (rest.startsWith("(?<")) {
      const close = this.src.indexOf(">", this.i);
      if (close < 0) throw new Error("unterminated group name");
      this.i = close + 1;
    } else if (rest.startsWith("(?")) {
      // Flag modifiers such as (?i:...): their inside may follow other rules; it is parsed only to find its end.
      this.i += 2;
      while (/[a-z-]/.test(this.src[this.i] ?? "")) this.i++;
      if (this.src[this.i] !== ":") throw new Error("unknown group");
      this.i++;
      kind = "unknown";
    } else this.i += 1;
    const inner = this.disjunction();
    if (this.src[this.i] !== ")") throw new Error("unterminated group");
    this.i++;
    // A lookaround consumes nothing: the text a match consists of does not include it.
    if (kind === "look") return EMPTY;
    return kind === "unknown" ? UNKNOWN : inner;
  }

  private quantifier(): { min: number; max: number } | null {
    const c = this.src[this.i];
    let q: { min: number; max: number } | null = null;
    if (c === "*") q = { min: 0, max: Infinity };
    else if (c === "+") q = { min: 1, max: Infinity };
    else if (c === "?") q = { min: 0, max: 1 };
    if (q) this.i++;
    else if (c === "{") {
      // Annex B: a "{" that does not form a quantifier is an ordinary character.
      const braced = /^\{(\d+)(?:(,)(\d*))?\}/.exec(this.src.slice(this.i));
      if (!braced) return null;
      this.i += braced[0].length;
      const min = Number(braced[1]);
      q = { min, max: braced[2] === undefined ? min : braced[3] === "" ? Infinity : Number(braced[3]) };
    }
    if (q && this.src[this.i] === "?") this.i++; // lazy: same strings
    return q;
  }

  private atomEscape(): RegexNode {
    const c = this.src[this.i + 1];
    if (c === undefined) throw new Error("trailing backslash");
    if (c === "b" || c === "B") {
      this.i += 2;
      return EMPTY;
    }
    if (c === "k" && this.namedGroups && this.src[this.i + 2] === "<") {
      // A back-reference: some string. Without named groups \k is the letter k, and \p{..} is always
      // "p" then text without the u flag: `\k<a|b>` and `\p{a|b}` alternate (hunt 94).
      const end = this.src.indexOf(">", this.i);
      if (end < 0) throw new Error("unterminated group name");
      this.i = end + 1;
      return UNKNOWN;
    }
    if (c >= "1" && c <= "9") {
      // A back-reference or (Annex B) a legacy octal escape: some string.
      this.i += 1;
      while (/[0-9]/.test(this.src[this.i] ?? "")) this.i++;
      return UNKNOWN;
    }
    const escaped = this.characterEscape(false);
    return escaped === null ? ANY_CHAR : this.char(escaped);
  }

  /**
   * The code unit of the escape at `this.i` (a backslash), or null for a class escape (\d, \w, ...)
   * or anything this parser does not model. Advances past the escape.
   */
  private characterEscape(inClass: boolean): string | null {
    const c = this.src[this.i + 1]!;
    this.i += 2;
    switch (c) {
      case "d":
      case "D":
      case "w":
      case "W":
      case "s":
      case "S":
        return null;
      case "t":
        return "\t";
      case "n":
        return "\n";
      case "v":
        return "\v";
      case "f":
        return "\f";
      case "r":
        return "\r";
      case "b":
        return inClass ? "\b" : null;
      case "0":
        if (/[0-9]/.test(this.src[this.i] ?? "")) return this.skipDigits();
        return "\0";
      case "c": {
        const letter = this.src[this.i] ?? "";
        if (/[A-Za-z]/.test(letter)) {
          this.i++;
          return String.fromCharCode(letter.charCodeAt(0) % 32);
        }
        if (inClass) return this.skipDigits();
        // Annex B: "\c" without a control letter is a backslash; the "c" is read next.
        this.i -= 1;
        return "\\";
      }
      case "x":
      case "u": {
        const digits = c === "x" ? 2 : 4;
        const hex = this.src.slice(this.i, this.i + digits);
        if (hex.length === digits && /^[0-9A-Fa-f]+$/.test(hex)) {
          this.i += digits;
          return String.fromCharCode(Number.parseInt(hex, 16));
        }
        return c;
      }
      default:
        if (c >= "1" && c <= "9") return this.skipDigits();
        if (c === "k" || c === "p" || c === "P") return inClass ? null : c;
        return c;
    }
  }

  /** Skips an octal or decimal escape's digits; what it stands for is not modelled. */
  private skipDigits(): null {
    while (/[0-9]/.test(this.src[this.i] ?? "")) this.i++;
    return null;
  }

  private characterClass(): RegexNode {
    this.i++;
    let negated = false;
    if (this.src[this.i] === "^") {
      negated = true;
      this.i++;
    }
    const members = new Set<string>();
    let any = false;
    while (this.src[this.i] !== "]") {
      if (this.i >= this.src.length) throw new Error("unterminated character class");
      const from = this.classAtom();
      if (this.src[this.i] === "-" && this.src[this.i + 1] !== "]" && this.i + 1 < this.src.length) {
        this.i++;
        const to = this.classAtom();
        if (from === null || to === null) {
          // Annex B: a range with a class escape on either side is the union of its parts and "-".
          any = true;
          continue;
        }
        const lo = from.charCodeAt(0);
        const hi = to.charCodeAt(0);
        if (hi - lo >= MAX_CLASS_CHARS * 4) any = true;
        else for (let code = lo; code <= hi; code++) if (!this.addFolded(members, String.fromCharCode(code))) any = true;
      } else if (from === null || !this.addFolded(members, from)) any = true;
    }
    this.i++;
    if (negated || any || members.size === 0 || members.size > MAX_CLASS_CHARS) return ANY_CHAR;
    return { kind: "char", chars: [...members] };
  }

  private classAtom(): string | null {
    const c = this.src[this.i]!;
    if (c !== "\\") {
      this.i++;
      return c;
    }
    if (this.src[this.i + 1] === "-") {
      this.i += 2;
      return "-";
    }
    return this.characterEscape(true);
  }

  private char(c: string): RegexNode {
    const members = new Set<string>();
    if (!this.addFolded(members, c)) return ANY_CHAR;
    return members.size > MAX_CLASS_CHARS ? ANY_CHAR : { kind: "char", chars: [...members] };
  }

  /** Adds what `c` matches; false when that is not modelled (any character). */
  private addFolded(into: Set<string>, c: string): boolean {
    const variants = this.folding.variants(c);
    if (!variants) return false;
    for (const variant of variants) into.add(variant);
    return true;
  }
}

const EMPTY: RegexNode = { kind: "empty" };
const ANY_CHAR: RegexNode = { kind: "char", chars: null };
const UNKNOWN: RegexNode = { kind: "unknown" };

/**
 * The code units a pattern character can match, written the way the index sees them: ASCII upper
 * case folded to lower case (the index folds it too). With the `i` flag (and no `u`), a character
 * also matches every code unit with the same canonical form (ECMA-262 Canonicalize: upper case,
 * except that a non-ASCII character never maps to an ASCII one). RE2's `ignoreCase` (`unicode`)
 * folds by Unicode's case orbits instead: an ASCII letter also matches its non-ASCII kin (`k` the
 * Kelvin sign, `s` the long s; a test holds this list to what RE2 matches), and a non-ASCII
 * character, whose orbit is not modelled here, matches any code unit (null).
 */
export class CaseFolding {
  static readonly exact = new CaseFolding(false, false);
  static readonly ignoreCase = new CaseFolding(true, false);
  static readonly unicode = new CaseFolding(true, true);
  private static classes: Map<number, number[]> | null = null;

  private constructor(
    private readonly ignoreCase: boolean,
    private readonly unicodeOrbits: boolean,
  ) {}

  variants(c: string): string[] | null {
    const code = c.charCodeAt(0);
    if (this.unicodeOrbits) {
      if (code >= 0x80) return null;
      const folded = foldAscii(c);
      return [folded, ...(NON_ASCII_KIN[folded] ?? [])];
    }
    if (code < 0x80 || !this.ignoreCase) return [foldAscii(c)];
    const same = CaseFolding.equivalents().get(canonicalize(code));
    return same ? same.map((unit) => String.fromCharCode(unit)) : [c];
  }

  /** Code units grouped by canonical form, for the groups with more than one member (built once). */
  private static equivalents(): Map<number, number[]> {
    if (CaseFolding.classes) return CaseFolding.classes;
    const groups = new Map<number, number[]>();
    for (let unit = 0x80; unit <= 0xffff; unit++) {
      const canonical = canonicalize(unit);
      let group = groups.get(canonical);
      if (!group) {
        group = [];
        groups.set(canonical, group);
      }
      group.push(unit);
    }
    for (const [canonical, group] of groups) {
      if (canonical >= 0x80 && !group.includes(canonical)) group.push(canonical);
      if (group.length < 2) groups.delete(canonical);
    }
    CaseFolding.classes = groups;
    return groups;
  }
}

/** The non-ASCII members of an ASCII letter's Unicode case orbit (RE2's `ignoreCase` matches them). */
export const NON_ASCII_KIN: Readonly<Record<string, readonly string[]>> = { k: ["\u212a"], s: ["\u017f"] };

function canonicalize(code: number): number {
  const upper = String.fromCharCode(code).toUpperCase();
  if (upper.length !== 1) return code;
  const mapped = upper.charCodeAt(0);
  return code >= 0x80 && mapped < 0x80 ? code : mapped;
}

function foldAscii(c: string): string {
  return c >= "A" && c <= "Z" ? c.toLowerCase() : c;
}
