import { describe, expect, it } from "vitest";
import { runShellCase, type ShellCase } from "../helpers/shell-cases";

/**
 * What sed and awk still did otherwise than GNU sed 4.9 and gawk/mawk (hunt 129): awk's CONVFMT and OFMT,
 * int(), %c, string constants that stay strings, var=value operands, getline by RS; sed's \U \L \u \l \E,
 * s///M, -i backups, -f script files, \< and \>, w files across files, F. Each case: the command, its
 * files, and the real tool's stdout, exit code and whether stderr was empty (LC_ALL=C.UTF-8). A CONVFMT of
 * a script's own is not applied (hunt 131; test/tools/bash.test.ts).
 */
const files: Record<string, string> = {};

const ROWS: ShellCase[] = [
  {
    ...{
      name: "awk CONVFMT: concatenation of 0.1+0.2",
      command: "awk 'BEGIN{x=0.1+0.2; print \"t: \" x}'",
      stdout: "t: 0.3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: END sum of decimals concatenated",
      command: 'awk \'{s+=$1} END{print "sum " s; print "avg=" s/NR}\' dec.txt',
      stdout: "sum 7.15\navg=1.43\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "dec.txt": "1.5\n2.25\n3.1\n0.1\n0.2\n" },
  },
  {
    ...{
      name: "awk CONVFMT: sum of a CSV column with a label",
      command: "awk -F, 'NR>1{t+=$2} END{print \"total: \" t}' prices.csv",
      stdout: "total: 1.45\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "prices.csv": "item,price\napple,0.1\npear,0.2\nfig,1.15\n" },
  },
  {
    ...{
      name: "awk CONVFMT: integers stay integers, big ones whole",
      command: 'awk \'BEGIN{print 3.0 "|" 2^31 "|" 1e15 "|" 2^53 "|" -7 "|" 1e15+0.5 "|" 100/3}\'',
      stdout: "3|2147483648|1000000000000000|9007199254740992-7|1e+15|33.3333\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: subscript of a fraction",
      command: 'awk \'BEGIN{a[1/3]=1; a[0.5]=2; a[2.0]=3; n=0; for(k in a) n++; print n, ((1/3) in a), ("0.333333" in a), ("2" in a)}\'',
      stdout: "3 1 1 1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: default CONVFMT value",
      command: "awk 'BEGIN{print CONVFMT, OFMT}'",
      stdout: "%.6g %.6g\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: string functions of fractions",
      command: "awk 'BEGIN{x=2/3; print length(x), substr(x, 1, 4), index(x, \"7\"), toupper(x)}'",
      stdout: "8 0.66 8 0.666667\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: printf %s of a fraction",
      command: "awk 'BEGIN{printf \"%s|%s|%5s|\\n\", 0.1+0.2, 1/3, 0.5}'",
      stdout: "0.3|0.333333|  0.5|\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: field assigned a fraction",
      command: "echo 'a 1.5' | awk '{$2 = $2 * 1.1; print; print $2}'",
      stdout: "a 1.65\n1.65\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: print with OFMT unchanged",
      command: "awk 'BEGIN{print 0.1+0.2, 1/3, 1e-7, 123456789.5}'",
      stdout: "0.3 0.333333 1e-07 1.23457e+08\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk CONVFMT: small and exponent forms",
      command: 'awk \'BEGIN{print 0.0001 "" , 0.00001 "", 1234567.5 "", -0.5 ""}\'',
      stdout: "0.0001 1e-05 1.23457e+06 -0.5\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk int() truncates toward zero",
      command: 'awk \'BEGIN{print int(-3.7), int(3.7), int("-2.5x"), int(-0.5), int("x")}\'',
      stdout: "-3 3 -2 0 0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk int() of negative fields",
      command: "printf -- '-1.5\\n-0.2\\n2.9\\n' | awk '{print int($1)}'",
      stdout: "-1\n0\n2\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk %c of numbers",
      command: 'awk \'BEGIN{printf "%c%c%c|%c|%c\\n", 65, 66.9, 67, "hello", 256}\'',
      stdout: "ABC|h|Ā\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk %c of a numeric field and a string constant",
      command: 'echo 72 105 | awk \'{printf "%c%c %c\\n", $1, $2, "65"}\'',
      stdout: "Hi 6\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk %c width",
      command: 'awk \'BEGIN{printf "[%3c][%-3c]\\n", 65, "x"}\'',
      stdout: "[  A][x  ]\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk string constant in an array element compares as string",
      command: 'awk \'BEGIN{a["x"]="10"; if (a["x"] < 9) print "str"; else print "num"; b=a["x"]; print (b < 9)}\'',
      stdout: "str\n1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk array element then number",
      command:
        'awk \'BEGIN{a[1]="10"; a[1]=10; print (a[1] < 9); a[2]="10"; a[2]++; print (a[2] < 9); a[3]="10"; delete a[3]; a[3]; print (a[3] < 9)}\'',
      stdout: "0\n0\n1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk split() elements stay strnums",
      command: 'awk \'BEGIN{a[1]="10"; split("10 9", a); print (a[1] < a[2]), (a[1] < 9)}\'',
      stdout: "0 0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk string constant in a field compares as string",
      command: "echo 'a b c' | awk '{$2=\"10\"; print ($2 < 9); $3=10; print ($3 < 9)}'",
      stdout: "1\n0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk new record clears field types",
      command: "printf '1 2\\n10 20\\n' | awk 'NR==1{$1=\"10\"} {print ($1 < 9)}'",
      stdout: "1\n0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk string constant parameter compares as string",
      command: 'awk \'function f(x){return x < 9} BEGIN{print f("10"), f(10), f("abc") }\'',
      stdout: "1 0 0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk parameter types are restored after the call",
      command: "awk 'function g(x){x=\"10\"; return x < 9} BEGIN{x=10; print g(1), (x < 9)}'",
      stdout: "1 0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk strnums: field, getline, ARGV, ENVIRON, -v",
      command:
        'echo 10 | X=10 awk -v v=10 \'BEGIN{print (ARGV[1] < 9), (ENVIRON["X"] < 9), (v < 9); "echo 10" | getline line; print (line < 9)}\' 10',
      stdout: "0 0 0\n0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk strnum field compares numerically",
      command: "printf '10\\n9\\n' | awk '$1 > 9'",
      stdout: "10\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk operand FS=: before a file",
      command: "awk '{print $1}' FS=: colons.txt",
      stdout: "root\ndaemon\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "colons.txt": "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n" },
  },
  {
    ...{
      name: "awk operand OFS=, before a file",
      command: "awk '{$1=$1; print}' OFS=, a.txt",
      stdout: "a1,x\na2,y\na3,z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "awk operand between files",
      command: "awk '{print n, $0}' n=1 a.txt n=2 b.txt",
      stdout: "1 a1 x\n1 a2 y\n1 a3 z\n2 b1 y\n2 b2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n", "b.txt": "b1 y\nb2 q\n" },
  },
  {
    ...{
      name: "awk operand FS with an escape",
      command: "awk '{print $2}' 'FS=\\t' tabs.tsv",
      stdout: "name\nfoo bar\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "tabs.tsv": "id\tname\tvalue\n1\tfoo bar\t3.5\n2\t\t7\n" },
  },
  { ...{ name: "awk operand then stdin", command: "echo x | awk '{print v, $0}' v=hi", stdout: "hi x\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "awk operand is not seen in BEGIN, is in END",
      command: 'awk \'BEGIN{print "[" v "]"} END{print "[" v "]"}\' v=1 a.txt v=2',
      stdout: "[]\n[2]\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "awk operand counts in ARGV",
      command: "awk 'BEGIN{print ARGC, ARGV[1], ARGV[2]}' FS=, csv.txt",
      stdout: "3 FS=, csv.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "csv.txt": "a,b,c\n1,2,3\n" },
  },
  {
    ...{
      name: "awk operand value is a strnum",
      command: "echo x | awk '{print (n < 9)}' n=10",
      stdout: "0\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "awk getline var < file honours RS",
      command: 'awk \'BEGIN{RS=","; while ((getline line < "rs.txt") > 0) print "[" line "]"}\'',
      stdout: "[a]\n[b]\n[c\n]\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "rs.txt": "a,b,c\n" },
  },
  {
    ...{
      name: "awk getline < file in paragraph mode",
      command: 'awk \'BEGIN{RS=""; while ((getline p < "paras.txt") > 0) n++; print n}\'',
      stdout: "3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "paras.txt": "p1 l1\np1 l2\n\n\np2 l1\n\np3 l1\np3 l2\n" },
  },
  {
    ...{
      name: "awk getline < file with default RS",
      command: "awk 'BEGIN{while ((getline l < \"a.txt\") > 0) n++; print n, l}'",
      stdout: "3 a3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "awk cmd | getline honours RS",
      command: 'awk \'BEGIN{RS=";"; while (("printf a\\\\;b\\\\;c" | getline x) > 0) print "<" x ">"}\'',
      stdout: "<a>\n<b>\n<c>\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\U& uppercases the match",
      command: "echo 'hello world' | sed 's/.*/\\U&/'",
      stdout: "HELLO WORLD\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\u capitalises the first letter",
      command: "echo 'hello world' | sed 's/\\(.\\)\\(.*\\)/\\u\\1\\2/'",
      stdout: "Hello world\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\L& lowercases",
      command: "echo 'Hello WORLD' | sed 's/.*/\\L&/'",
      stdout: "hello world\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\U...\\E ends the conversion",
      command: "echo 'foo bar' | sed 's/\\(foo\\) \\(bar\\)/\\U\\1\\E \\2/'",
      stdout: "FOO bar\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\u\\L: first upper, rest lower",
      command: "echo 'hELLO wORLD' | sed -E 's/(\\w+) (\\w+)/\\u\\L\\1 \\u\\L\\2/'",
      stdout: "hello world\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\l and \\U on literal text",
      command: "echo 'ABC' | sed 's/B/\\l&\\Uxy\\Ez/'",
      stdout: "AbXYzC\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\U with g",
      command: "echo 'one two three' | sed 's/\\b[a-z]/\\U&/g'",
      stdout: "One Two Three\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\u\\L& with -E capitalises words",
      command: "echo 'the QUICK brown' | sed -E 's/[a-zA-Z]+/\\u\\L&/g'",
      stdout: "the quick brown\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{ name: "sed \\L\\u combination", command: "echo 'mIxEd' | sed 's/.*/\\L\\u&/'", stdout: "Mixed\n", exitCode: 0, stderrEmpty: true },
  },
  { ...{ name: "sed \\U with non-ASCII", command: "echo 'héllo' | sed 's/.*/\\U&/'", stdout: "HÉLLO\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "sed \\U in nth occurrence",
      command: "echo 'a b c' | sed 's/[a-z]/\\U&/2'",
      stdout: "a B c\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed s///M ^ at line starts",
      command: "printf 'a\\nb\\n' | sed 'N;s/^/>/Mg'",
      stdout: ">a\n>b\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed s///M $ at line ends",
      command: "printf 'a\\nb\\n' | sed 'N;s/$/</Mg'",
      stdout: "a<\nb<\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed s///M only the first",
      command: "printf 'ab\\nab\\n' | sed 'N;s/b$/X/M'",
      stdout: "aX\nab\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed s///M with I and number",
      command: "printf 'x\\nX\\nx\\n' | sed 'N;N;s/^x$/y/MI2'",
      stdout: "x\ny\nx\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed without M $ is the end of the pattern space",
      command: "printf 'ab\\nab\\n' | sed 'N;s/b$/X/'",
      stdout: "ab\naX\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed -i.bak keeps a backup",
      command: "sed -i.bak 's/foo/FOO/' f.txt; cat f.txt; echo ---; cat f.txt.bak",
      stdout:
        "hello world\nFOO bar baz\nbar FOO\nx\nend of FOO\nFOO\nfinal line\n---\nhello world\nfoo bar baz\nbar foo\nx\nend of foo\nfoo\nfinal line\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "f.txt": "hello world\nfoo bar baz\nbar foo\nx\nend of foo\nfoo\nfinal line\n" },
  },
  {
    ...{
      name: "sed -i.orig with -e and two files",
      command: "sed -i.orig -e 's/a/A/' a.txt b.txt; cat a.txt b.txt a.txt.orig b.txt.orig",
      stdout: "A1 x\nA2 y\nA3 z\nb1 y\nb2 q\na1 x\na2 y\na3 z\nb1 y\nb2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n", "b.txt": "b1 y\nb2 q\n" },
  },
  {
    ...{
      name: "sed -i'.bak' (quoted suffix)",
      command: "sed -i'.bak' '1d' a.txt; cat a.txt a.txt.bak",
      stdout: "a2 y\na3 z\na1 x\na2 y\na3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed --in-place=.b",
      command: "sed --in-place=.b 's/x/y/' a.txt; cat a.txt.b a.txt",
      stdout: "a1 x\na2 y\na3 z\na1 y\na2 y\na3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -i without suffix makes no backup",
      command: "sed -i 's/x/y/' a.txt; ls",
      stdout: "a.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -i with * in the suffix",
      command: "sed -i'old_*' 's/x/y/' a.txt; ls; cat old_a.txt",
      stdout: "a.txt\nold_a.txt\na1 x\na2 y\na3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -E -i.bak cluster",
      command: "sed -Ei.bak 's/(a)1/\\1X/' a.txt; cat a.txt a.txt.bak",
      stdout: "aX x\na2 y\na3 z\na1 x\na2 y\na3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -f: #n on the first line means -n",
      command: "printf '#n\\n/foo/p\\n' > s.sed; sed -f s.sed f.txt",
      stdout: "foo bar baz\nbar foo\nend of foo\nfoo\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "f.txt": "hello world\nfoo bar baz\nbar foo\nx\nend of foo\nfoo\nfinal line\n" },
  },
  {
    ...{
      name: "sed -f: a\\ text keeps leading blanks",
      command: "printf '1a\\\\\\n   indented\\n$i\\\\\\n\\tTab\\n' > s.sed; sed -f s.sed a.txt",
      stdout: "a1 x\n   indented\na2 y\n\tTab\na3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -f: comments and blank lines",
      command: "printf '# comment\\n\\n  s/a/A/ # trailing\\n\\n' > s.sed; sed -f s.sed a.txt",
      stdout: "A1 x\nA2 y\nA3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -f: #n is only for the first line",
      command: "printf '1d\\n#n\\n' > s.sed; sed -f s.sed a.txt",
      stdout: "a2 y\na3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -e then -f in order",
      command: "printf 's/A/B/\\n' > s.sed; sed -e 's/a/A/' -f s.sed a.txt",
      stdout: "B1 x\nB2 y\nB3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n" },
  },
  {
    ...{
      name: "sed -f with multi-line a text",
      command: "printf '2a\\\\\\n  one\\\\\\n  two\\n' > s.sed; sed -f s.sed b.txt",
      stdout: "b1 y\nb2 q\n  one\n  two\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "b.txt": "b1 y\nb2 q\n" },
  },
  {
    ...{
      name: "sed -n -f with #n too",
      command: "printf '#n\\np\\n' > s.sed; sed -n -f s.sed b.txt",
      stdout: "b1 y\nb2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "b.txt": "b1 y\nb2 q\n" },
  },
  {
    ...{
      name: "sed #n as -e script",
      command: "sed '#n' b.txt; sed -e '#n' -e p b.txt",
      stdout: "b1 y\nb2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "b.txt": "b1 y\nb2 q\n" },
  },
  {
    ...{
      name: "sed \\< and \\> around a word",
      command: "echo 'cat concat cats' | sed 's/\\<cat\\>/dog/g'",
      stdout: "dog concat cats\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed -E \\<",
      command: "echo 'foo foobar barfoo' | sed -E 's/\\<foo/X/g'",
      stdout: "X Xbar barfoo\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\b still works",
      command: "echo 'foo foobar' | sed 's/\\bfoo\\b/X/g'",
      stdout: "X foobar\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed \\< in an address",
      command: "printf 'cat\\nconcat\\n' | sed -n '/\\<cat/p'",
      stdout: "cat\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sed F prints the file name",
      command: "sed -n '1F' a.txt b.txt; sed -s -n '1F' a.txt b.txt; echo x | sed F",
      stdout: "a.txt\na.txt\nb.txt\n-\nx\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n", "b.txt": "b1 y\nb2 q\n" },
  },
  {
    ...{
      name: "sed w file across several files under -s",
      command: "sed -s -n 'w out.txt' a.txt b.txt; cat out.txt",
      stdout: "a1 x\na2 y\na3 z\nb1 y\nb2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n", "b.txt": "b1 y\nb2 q\n" },
  },
  {
    ...{
      name: "sed w file across several files under -i",
      command: "sed -i '/1/w out.txt' a.txt b.txt; cat out.txt",
      stdout: "a1 x\nb1 y\n",
      exitCode: 0,
      stderrEmpty: true,
    },
    files: { "a.txt": "a1 x\na2 y\na3 z\n", "b.txt": "b1 y\nb2 q\n" },
  },
];
const CASES: ShellCase[] = ROWS.map((c) => ({ files, ...c }));

describe("sed and awk: what hunts 122 and 125 left", () => {
  it.each(CASES)("$name", async (c) => {
    expect(await runShellCase(c)).toEqual({ stdout: c.stdout, exitCode: c.exitCode, stderrEmpty: c.stderrEmpty });
  });
});
