/**
 * Printable ASCII from the rarest character in source code and prose to the most common: ordered by
 * the mean log frequency of each byte over four corpora read on 2026-12-05 (41.5 MB of .js/.ts from
 * this project's node_modules, 11.3 MB of Python's standard library, 40 MB of C headers from
 * /usr/include, 39.5 MB of .md/.txt/.html from /usr/share/doc). As ripgrep's memchr crate does
 * with its own table, it is a guess that holds for most text, not a property of any one file.
 */
const RARE_TO_COMMON = "~^?%$@Z!QJ&|+`YqWzKXV}{7j\\GH68UF][94#<B';53DMOPLNw2R-xv*\":C/=TkI>1SyEA,.b0g()mhufp_dlcroianste ";

/** How common a character is: non-ASCII ones count as rarest, control characters as most common. */
function commonness(code: number): number {
  if (code >= 0x80) return -1;
  const rank = RARE_TO_COMMON.indexOf(String.fromCharCode(code));
  return rank < 0 ? RARE_TO_COMMON.length : rank;
}

/** Whether `char` is as rare as "-" or rarer in code and prose: alone, it can pick a regex's lines. */
export function isRareCharacter(char: string): boolean {
  return char.length === 1 && commonness(char.charCodeAt(0)) <= RARE_TO_COMMON.indexOf("-");
}

/**
 * V8 searches a text shorter than this from one place its first character occurs to the next (a
 * memchr), and a longer one with Boyer-Moore, which was slower on source code in every case timed.
 */
const LINEAR_SEARCH_MAX = 6;

/**
 * Finds `text` (case-sensitive) in a string from a position on, as `indexOf` does, faster on source
 * code: V8 goes from one place the text's first character occurs to the next, and "return" starts
 * with an "r", found every few bytes of code. Like ripgrep, this looks for the text's rarest
 * character instead (an anchor of up to 6 characters from it) and checks the whole text at each
 * place the anchor occurs. Timed over 36 MB of .js/.ts in 16 KiB strings: `return` 20 -> 13 ms,
 * `deprecated` 26 -> 11, `exports` 31 -> 6, `useState` 28 -> 5; `const` (no rarer letter) 13 -> 13.
 */
export function plainTextFinder(text: string): (haystack: string, from: number) => number {
  let k = 0;
  for (let i = 1; i < text.length; i++) if (commonness(text.charCodeAt(i)) < commonness(text.charCodeAt(k))) k = i;
  const anchor = text.slice(k, k + LINEAR_SEARCH_MAX);
  if (k === 0 && anchor.length === text.length) return (haystack, from) => haystack.indexOf(text, from);
  /** The anchor turned out common in this search's text: `indexOf` from then on. */
  let common = false;
  return (haystack, from) => {
    if (common) return haystack.indexOf(text, from);
    // Each place the text occurs at or after `from` has its anchor k characters in: the first one
    // that holds the whole text is the answer.
    let checked = 0;
    for (let at = haystack.indexOf(anchor, from + k); at >= 0; at = haystack.indexOf(anchor, at + 1)) {
      if (haystack.startsWith(text, at - k)) return at - k;
      // A miss costs up to the text's length: where the anchor comes at nearly every place (a run of
      // "~", a text of 1,000 of them), that made the search take the haystack's length times the
      // text's (10.7 s for 5 MiB, hunt 87). Past a budget that grows with the way gone, `indexOf`
      // searches on from the first place not checked yet.
      checked += text.length;
      if (checked > MISS_BUDGET + MISS_PER_CHAR * (at - from)) {
        common = true;
        return haystack.indexOf(text, at - k + 1);
      }
    }
    return -1;
  };
}

/** Characters the anchor's misses may cost a search before it gives way to `indexOf`: a fixed part, and one per character gone. */
const MISS_BUDGET = 4096;
const MISS_PER_CHAR = 1;
