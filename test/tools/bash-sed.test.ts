import { describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

/**
 * sed as GNU sed 4.9 runs the scripts coding agents write (hunt 122: just-bash closed a range on its
 * start line, printed `2i\text` with its backslash, ignored `I`, and let bad scripts pass with exit 0).
 * Each row: what, the command, GNU sed 4.9's stdout and exit code (recorded from /usr/bin/sed).
 */
const GNU: [string, string, string, number][] = [
  ["range end not checked on its start line", "sed -n '/foo/,/bar/p' f.txt", "foo bar baz\nbar foo\nend of foo\nfoo\nfinal line\n", 0],
  ["N,/re/ ; /re/,N before the start", "seq 10 | sed -n '2,/[0-9]/p;/5/,2p'", "2\n3\n5\n", 0],
  ["addr,~N and addr,+N", "seq 10 | sed -n '/[26]/,~3p;/9/,+5='", "2\n3\n6\n7\n8\n9\n9\n10\n", 0],
  ["0,/re/ and ! on a range", "seq 6 | sed -n '0,/1/p;2,4!='", "1\n1\n5\n6\n", 0],
  [
    "two identical ranges keep their own state",
    "sed -n '/foo/,/bar/p;/foo/,/bar/=' f.txt",
    "foo bar baz\n2\nbar foo\n3\nend of foo\n5\nfoo\n6\nfinal line\n7\n",
    0,
  ],
  ["i\\text one-liner", "sed '2i\\inserted' f.txt", "hello world\ninserted\nfoo bar baz\nbar foo\nx\nend of foo\nfoo\nfinal line\n", 0],
  ["c\\text on a regex", "sed '/o/c\\CH' f.txt", "CH\nCH\nCH\nx\nCH\nCH\nfinal line\n", 0],
  ["a/i forms", "seq 3 | sed -e '1i\\' -e '  first' -e '$a last' -e '2i\\  two'", "  first\n1\n  two\n2\n3\nlast\n", 0],
  ["c on a range prints once", "seq 5 | sed '2,4c\\\nreplaced'", "1\nreplaced\n5\n", 0],
  ["a then n/N, i in order with p", "seq 4 | sed -e '1a X' -e 'n;i Y' -e p", "1\nX\nY\n2\n2\n3\nY\n4\n4\n", 0],
  [
    "/re/I address",
    "sed -n '/FOO/I p' f.txt; sed '/FOO/Id' f.txt",
    "foo bar baz\nbar foo\nend of foo\nfoo\nhello world\nx\nfinal line\n",
    0,
  ],
  ["s///I and s///gI", "sed 's/O/0/I;s/L/1/gI' f.txt", "he110 wor1d\nf0o bar baz\nbar f0o\nx\nend 0f foo\nf0o\nfina1 1ine\n", 0],
  [
    "H;${x;...} joins with a leading separator",
    "sed -n 'H;${x;s/\\n/|/g;p}' f.txt",
    "|hello world|foo bar baz|bar foo|x|end of foo|foo|final line\n",
    0,
  ],
  [
    "last line without newline: 1!G;h;$p, x;$!d, G, n;d, 3q, $=, l",
    "sed -n '1!G;h;$p' n.txt; echo; sed 'x;$!d' n.txt; echo; sed G n.txt; echo; sed 'n;d' n.txt; echo; sed 3q n.txt; sed -n '$=' n.txt; sed -n l n.txt",
    "gamma foo\nbeta two\nalpha one\n\nbeta two\n\nalpha one\n\nbeta two\n\ngamma foo\n\n\nalpha one\ngamma foo\nalpha one\nbeta two\ngamma foo\n3\nalpha one$\nbeta two$\ngamma foo$\n",
    0,
  ],
  [
    "b inside a group ends the cycle",
    "sed -n '/o/{p;b};s/^/-/p' f.txt",
    "hello world\nfoo bar baz\nbar foo\n-x\nend of foo\nfoo\n-final line\n",
    0,
  ],
  ["t/T after N", "printf 'a\\nb\\n' | sed 's/a/X/;N;t;s/^/no/'", "noX\nb\n", 0],
  ["unterminated s", "sed 's/a/b' f.txt", "", 1],
  ["unmatched \\(", "sed 's/\\(a/b/' f.txt", "", 1],
  ["unmatched \\{", "sed -n '/a\\{1/p' f.txt", "", 1],
  ["y with different lengths (characters)", "sed 'y/😀é/XYZ/' f.txt", "", 1],
  ["missing input file: exit 2, the others processed", "sed -n '1p' missing.txt f.txt", "hello world\n", 2],
  ["-i without a file, undefined label: exit 4", "sed -i 's/a/b/'; echo rc=$?; sed 'b nolabel' f.txt; echo rc=$?", "rc=4\nrc=4\n", 0],
  [
    "q5 / Q5 exit codes",
    "sed '2q5' f.txt; echo rc=$?; sed '2Q6' f.txt; echo rc=$?",
    "hello world\nfoo bar baz\nrc=5\nhello world\nrc=6\n",
    0,
  ],
  ["-z", "printf 'a\\nb\\0c\\0' | sed -z 's/^/>/;s/\\n/,/g' | cat -v", ">a,b^@>c^@", 0],
  ["-s", "sed -s -n '$p' f.txt o.txt", "final line\nR2\n", 0],
  [
    "w file and s///w file",
    "sed -n '/foo/w w1.txt' f.txt; sed 's/o/0/w w2.txt' n.txt >/dev/null; cat w1.txt w2.txt; printf '' | sed 'w w3.txt'; cat w3.txt; echo",
    "foo bar baz\nbar foo\nend of foo\nfoo\nalpha 0ne\nbeta tw0\ngamma f0o\n",
    0,
  ],
  ["R file", "sed 'R o.txt' f.txt", "hello world\nR1\nfoo bar baz\nR2\nbar foo\nx\nend of foo\nfoo\nfinal line\n", 0],
  [
    "l wraps at 70 and escapes UTF-8 bytes",
    "printf '%0100d\\n' 0 | sed -n l; echo 'héllo' | sed -n 'l;l 4'",
    "000000000000000000000000000000000000000000000000000000000000000000000\\\n0000000000000000000000000000000$\nh\\303\\251llo$\nh\\\n\\303\\\n\\251\\\nllo$\n",
    0,
  ],
];

const files = {
  "f.txt": "hello world\nfoo bar baz\nbar foo\nx\nend of foo\nfoo\nfinal line\n",
  "n.txt": "alpha one\nbeta two\ngamma foo",
  "o.txt": "R1\nR2\n",
};

describe("sed against GNU sed 4.9", () => {
  it.each(GNU)("%s", async (_what, command, stdout, exitCode) => {
    const fs = new MemoryWorkspaceFs(files);
    const out = await bashTool.execute({ command: `{ ${command}\n} 2>/dev/null; echo "rc=$?"` }, toolContext(fs, { allowWrite: true }));
    expect(out.text).toBe(`${stdout}rc=${exitCode}`);
  });
});
