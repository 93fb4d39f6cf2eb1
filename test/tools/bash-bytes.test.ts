import { describe, expect, it } from "vitest";
import { runShellCase, type ShellCase } from "../helpers/shell-cases";

/**
 * printf and echo -e wrote a byte escape of 0x80 or more as the UTF-8 encoding of that code point (hunt 130):
 * printf '\303\251' wrote 4 bytes of mojibake instead of the 2 of é. Each case: the command, its files, and
 * GNU bash 5.2's stdout (bytes made visible with wc -c, od -c or cat -v), exit code and whether stderr was empty.
 */
const files: Record<string, string> = {};

const ROWS: ShellCase[] = [
  {
    ...{ name: "printf \\x89 is one byte (PNG magic)", command: "printf '\\x89P' | wc -c", stdout: "2\n", exitCode: 0, stderrEmpty: true },
  },
  {
    ...{
      name: "printf octal UTF-8 bytes are 2 bytes, not 4",
      command: "printf '\\303\\251' | wc -c",
      stdout: "2\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "printf octal UTF-8 to a file: bytes and text",
      command: "printf '\\303\\251\\n' > f; wc -c f; od -An -c f; cat f",
      stdout: "3 f\n 303 251  \\n\né\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "echo -ne \\xe9 is one byte", command: "echo -ne '\\xe9' | wc -c", stdout: "1\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "printf %b \\x41\\xff is two bytes",
      command: "printf '%b' '\\x41\\xff' | wc -c",
      stdout: "2\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "printf \\u00e9 stays UTF-8 (2 bytes)",
      command: "printf '\\u00e9' | wc -c; printf '\\u00e9\\U0001F600\\n' | od -An -c",
      stdout: "2\n 303 251 360 237 230 200  \\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "cat -v of a raw byte", command: "printf '\\xe9\\n' | cat -v", stdout: "M-i\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "command substitution of UTF-8 bytes reads back as text",
      command: "x=$(printf '\\303\\251'); echo \"$x\"; echo ${#x}",
      stdout: "é\n1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "printf -v of octal UTF-8 bytes holds the text",
      command: "printf -v v '\\303\\251'; echo \"$v\" ${#v}",
      stdout: "é 1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "printf -v %b of \\0NNN UTF-8 bytes",
      command: "printf -v v '%b' '\\0303\\0251'; echo \"$v\"",
      stdout: "é\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "printf -v into an array element",
      command: "printf -v 'a[1]' 'caf\\xc3\\xa9'; echo \"${a[1]}\"",
      stdout: "café\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "text and a raw byte mixed",
      command: "printf 'é\\xe9x\\n' | od -An -c",
      stdout: " 303 251 351   x  \\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "directives and a raw byte",
      command: "printf '%s:\\xff:%d|%3s\\n' é 7 ab | od -An -c",
      stdout: " 303 251   : 377   :   7   |       a   b  \\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "the format reused for each argument",
      command: "printf '\\xe9%s\\n' a b | od -An -c",
      stdout: " 351   a  \\n 351   b  \\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "a binary header written to a file",
      command: "printf '\\x89PNG\\r\\n\\x1a\\n' > p.png; wc -c p.png; od -An -c p.png",
      stdout: "8 p.png\n 211   P   N   G  \\r  \\n 032  \\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "echo -e \\0NNN and \\xHH",
      command: "echo -e '\\0351\\x41\\xe9' | od -An -c",
      stdout: " 351   A 351  \\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "echo -e of UTF-8 bytes reads as text",
      command: "echo -e 'caf\\xc3\\xa9' | cat; echo -e 'caf\\0303\\0251' | wc -c",
      stdout: "café\n6\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "echo with xpg_echo",
      command: "shopt -s xpg_echo; echo '\\0351' | od -An -c; echo -n '\\xe9' | wc -c",
      stdout: " 351  \\n\n1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "echo -e \\c stops after a raw byte",
      command: "echo -e 'x\\xe9\\cignored' | od -An -c",
      stdout: "   x 351\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "echo -e \\x7f\\x80", command: "echo -e '\\x7f\\x80' | wc -c", stdout: "3\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "printf %c of a multibyte character is its first byte",
      command: "printf '%c' é | od -An -c",
      stdout: " 303\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "printf octal past 0377 wraps to a byte",
      command: "printf '\\777\\400' | od -An -c",
      stdout: " 377  \\0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{ name: "printf %b \\0777", command: "printf '%b' '\\0777\\351' | od -An -c", stdout: " 377 351\n", exitCode: 0, stderrEmpty: true },
  },
  {
    ...{
      name: "printf \\u of a surrogate writes its 3 bytes",
      command: "printf '\\ud800' | od -An -c",
      stdout: " 355 240 200\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "appends of raw bytes",
      command: "printf '\\xe9' >> g; echo -ne '\\xe9' >> g; wc -c g; od -An -c g",
      stdout: "2 g\n 351 351\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "head -c of raw bytes",
      command: "printf '\\xe9abc' | head -c 2 | od -An -c",
      stdout: " 351   a\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "grep finds text written as octal bytes",
      command: "printf '\\303\\251\\n' | grep -c é",
      stdout: "1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "base64 of raw bytes", command: "printf '\\xff\\xfe' | base64", stdout: "//4=\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "md5sum of a raw byte",
      command: "printf '\\xe9' | md5sum",
      stdout: "3406877694691ddd1dfb0aca54681407  -\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "tee of raw bytes",
      command: "printf '\\xe9' | tee t > /dev/null; wc -c t",
      stdout: "1 t\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "cat -v of a file written by printf",
      command: "printf 'caf\\xe9\\n' > f; cat -v f",
      stdout: "cafM-i\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "NUL in the middle",
      command: "printf 'a\\0b\\x00c' | od -An -c",
      stdout: "   a  \\0   b  \\0   c\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "an error keeps the bytes and exit 1",
      command: "printf '%d\\xe9\\n' abc | od -An -c; printf '%d\\xe9\\n' abc >/dev/null; echo rc=$?",
      stdout: "   0 351  \\n\nrc=1\n",
      exitCode: 0,
      stderrEmpty: false,
    },
  },
  {
    ...{
      name: "plain text output unchanged",
      command: "printf '%s|%5s|\\n' é ab | od -An -c; echo é | od -An -c; printf 'a\\tb\\n'; echo -e 'x\\ty'; printf '%b\\n' 'é\\tz'",
      stdout: " 303 251   |               a   b   |  \\n\n 303 251  \\n\na\tb\nx\ty\né\tz\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "plain text from a file",
      command: 'printf \'%s\\n\' "$(cat u.txt)"; echo -e "$(cat u.txt)" | wc -c',
      stdout: "naïve café\n13\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "u.txt": "naïve café\n" },
  },
  {
    ...{
      name: "$'...' octal UTF-8 bytes are one character",
      command: "x=$'\\303\\251'; echo \"$x\" ${#x}; echo $'\\342\\202\\254x' | od -An -c",
      stdout: "é 1\n 342 202 254   x  \\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "$'...' mixed hex and octal",
      command: "x=$'\\x41\\101\\xc3\\251'; echo \"$x\"",
      stdout: "AAé\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "UTF-8 bytes in a group, loop or function stay text",
      command:
        "{ printf '\\xc3\\xa9\\n'; echo -e '\\0303\\0251'; } | od -An -c; for i in 1 2; do printf '\\342\\234\\223 %s\\n' $i; done; f() { printf '%b\\n' '\\0342\\0202\\0254'; }; f",
      stdout: " 303 251  \\n 303 251  \\n\n✓ 1\n✓ 2\n€\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "a byte-order mark written by escapes is kept",
      command: "printf '\\xef\\xbb\\xbfx' | wc -c; printf '\\357\\273\\277x' > f; wc -c f",
      stdout: "4\n4 f\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "printf \\xH with one hex digit",
      command: "printf '\\xe|\\x41' | od -An -c",
      stdout: " 016   |   A\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
];
const CASES: ShellCase[] = ROWS.map((c) => ({ files, ...c }));

describe("printf and echo write the bytes of their byte escapes", () => {
  it.each(CASES)("$name", async (c) => {
    expect(await runShellCase(c)).toEqual({ stdout: c.stdout, exitCode: c.exitCode, stderrEmpty: c.stderrEmpty });
  });
});
