import { describe, expect, it } from "vitest";
import { runShellCase, type ShellCase } from "../helpers/shell-cases";

/**
 * The options agents use that just-bash lacked or read otherwise (hunt 128): xargs -n/-L/-d/-0/-P and quoting,
 * head -n -N, sort's byte order, -n, -g, -h and several files, cut -b/--complement/--output-delimiter, wc -L,
 * du -b, paste from stdin, tac of several files, nl, find -type l/-executable/-perm, ls -p; sort of
 * characters above U+FFFF (hunt 131). Each case: the command, its files, and GNU's stdout, exit code and
 * whether stderr was empty (LC_ALL=C.UTF-8).
 */
const files: Record<string, string> = {
  "a.txt": "a1 x\na2 y\na3 z\n",
  "b.txt": "b1 y\nb2 q\n",
  "nonl.txt": "one two\nthree four",
  "n.txt": "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
  "words.txt": "apple\nBanana\n_a\n10\n9\nZebra\nabc\nabc\nÉclair\néclair\n-x\n a\n",
  "nums.txt": "10\n1e3\n2\n-1\n0x10\n3.5\n1e-2\n+4\n",
  "list.txt": "one\ntwo three\nfour\n",
  "csv.txt": "k1,v1,w1\nk2,v2,w2\nk3,v3,w3\n",
  "u.txt": "héllo wörld\n日本語\nab\n",
  "d/x.sh": "#!/bin/sh\necho x\n",
  "d/y.txt": "yy\n",
};

const ROWS: ShellCase[] = [
  { ...{ name: "xargs -n1", command: "printf 'a b c\\nd\\n' | xargs -n1 echo", stdout: "a\nb\nc\nd\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "xargs -n 2",
      command: "printf 'a b c\\nd e\\n' | xargs -n 2 echo",
      stdout: "a b\nc d\ne\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "xargs -n2 default echo",
      command: "printf '1 2 3 4 5\\n' | xargs -n2",
      stdout: "1 2\n3 4\n5\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "xargs -d newline",
      command: "printf 'a b\\nc d\\n' | xargs -d '\\n' -n1 echo",
      stdout: "a b\nc d\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "xargs -d , ", command: "printf 'x,y,z' | xargs -d , echo", stdout: "x y z\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "xargs -d , keeps trailing newline",
      command: "printf 'x,y\\n' | xargs -d , -n1 echo | tr '\\n' '|'",
      stdout: "x|y||",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "xargs -L 1",
      command: "printf 'a b\\nc d\\ne\\n' | xargs -L 1 echo",
      stdout: "a b\nc d\ne\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{ name: "xargs -L2", command: "printf 'a b\\nc d\\ne\\n' | xargs -L2 echo", stdout: "a b c d\ne\n", exitCode: 0, stderrEmpty: true },
  },
  { ...{ name: "xargs -0", command: "printf 'a b\\0c\\0' | xargs -0 -n1 echo", stdout: "a b\nc\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "xargs -P 4 serial",
      command: "printf '1\\n2\\n3\\n' | xargs -P 4 -n 1 echo | sort",
      stdout: "1\n2\n3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "xargs -P4 -I",
      command: "printf '1\\n2\\n' | xargs -P4 -I{} echo item {} | sort",
      stdout: "item 1\nitem 2\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "xargs -I backslash joins",
      command: "printf 'a\\\\\\nb\\nc\\n' | xargs -I{} echo '[{}]'",
      stdout: "[a\nb]\n[c]\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "xargs -n1 files",
      command: "ls *.txt | xargs -n1 wc -l",
      stdout: "3 a.txt\n2 b.txt\n3 csv.txt\n3 list.txt\n12 n.txt\n1 nonl.txt\n8 nums.txt\n3 u.txt\n12 words.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "xargs -r empty", command: "printf '' | xargs -r echo hi; echo rc=$?", stdout: "rc=0\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "xargs -n 0 invalid", command: "echo a | xargs -n 0 echo; echo rc=$?", stdout: "rc=1\n", exitCode: 0, stderrEmpty: false } },
  { ...{ name: "xargs -I %", command: "printf 'a\\nb\\n' | xargs -I % echo %%", stdout: "aa\nbb\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "xargs --max-args=2",
      command: "printf '1 2 3\\n' | xargs --max-args=2 echo",
      stdout: "1 2\n3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "xargs -d '\\t'",
      command: "printf 'a\\tb c\\n' | xargs -d '\\t' -n1 echo",
      stdout: "a\nb c\n\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "head -n -3", command: "head -n -3 n.txt", stdout: "1\n2\n3\n4\n5\n6\n7\n8\n9\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "head -n-3 stdin", command: "seq 5 | head -n-3", stdout: "1\n2\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "head -c -3", command: "head -c -3 a.txt", stdout: "a1 x\na2 y\na3", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "head -n -20 (all)", command: "head -n -20 n.txt; echo rc=$?", stdout: "rc=0\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "head -n -2 two files",
      command: "head -n -2 a.txt b.txt",
      stdout: "==> a.txt <==\na1 x\n\n==> b.txt <==\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "head -n -1 nonl", command: "head -n -1 nonl.txt", stdout: "one two\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "head --lines=-2", command: "head --lines=-2 a.txt", stdout: "a1 x\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "head -c -0", command: "head -c -0 a.txt", stdout: "a1 x\na2 y\na3 z\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "tail -n +3", command: "tail -n +3 n.txt", stdout: "3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "tail -n +1 nonl", command: "tail -n +1 nonl.txt", stdout: "one two\nthree four", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "tail -c +3", command: "tail -c +3 a.txt", stdout: " x\na2 y\na3 z\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "tail -n +2 two files",
      command: "tail -n +2 a.txt b.txt",
      stdout: "==> a.txt <==\na2 y\na3 z\n\n==> b.txt <==\nb2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "tail -c +20 beyond", command: "tail -c +20 b.txt; echo rc=$?", stdout: "rc=0\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "tail +2 plain stdin", command: "seq 4 | tail -n +3", stdout: "3\n4\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "sort C.UTF-8 byte order",
      command: "sort words.txt",
      stdout: " a\n-x\n10\n9\nBanana\nZebra\n_a\nabc\nabc\napple\nÉclair\néclair\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -u byte order",
      command: "sort -u words.txt",
      stdout: " a\n-x\n10\n9\nBanana\nZebra\n_a\nabc\napple\nÉclair\néclair\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -r",
      command: "sort -r words.txt",
      stdout: "éclair\nÉclair\napple\nabc\nabc\n_a\nZebra\nBanana\n9\n10\n-x\n a\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "sort -f", command: "printf 'b\\nB\\na\\nA\\n_\\n' | sort -f", stdout: "A\na\nB\nb\n_\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "sort -n 1e3",
      command: "sort -n nums.txt",
      stdout: "-1\n+4\n0x10\n1e-2\n1e3\n2\n3.5\n10\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "sort -g", command: "sort -g nums.txt", stdout: "-1\n1e-2\n2\n3.5\n+4\n10\n0x10\n1e3\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "sort -g inf nan",
      command: "printf '3\\ninf\\n-inf\\nnan\\n1e1\\nabc\\n0.5\\n' | sort -g",
      stdout: "abc\nnan\n-inf\n0.5\n3\n1e1\ninf\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -k2 -t,",
      command: "sort -t, -k2,2r csv.txt",
      stdout: "k3,v3,w3\nk2,v2,w2\nk1,v1,w1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -k2n",
      command: "printf 'a 10\\nb 9\\nc 100\\n' | sort -k2n",
      stdout: "b 9\na 10\nc 100\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -V",
      command: "printf 'v1.10\\nv1.2\\nv1.9\\nv1.2a\\n' | sort -V",
      stdout: "v1.2\nv1.2a\nv1.9\nv1.10\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -h",
      command: "printf '1K\\n2M\\n512\\n1G\\n3k\\n' | sort -h",
      stdout: "512\n1K\n3k\n2M\n1G\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -s -k1,1",
      command: "printf 'b 2\\na 3\\nb 1\\na 1\\n' | sort -s -k1,1",
      stdout: "a 3\na 1\nb 2\nb 1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort two files one without newline",
      command: "sort nonl.txt a.txt",
      stdout: "a1 x\na2 y\na3 z\none two\nthree four\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort mixed case and digits",
      command: "printf 'a\\nB\\n1\\n_\\n~\\nZ\\n' | sort",
      stdout: "1\nB\nZ\n_\na\n~\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -n ties last-resort",
      command: "printf '1 b\\n1 a\\n01 c\\n' | sort -n",
      stdout: "01 c\n1 a\n1 b\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "sort utf8", command: "sort u.txt", stdout: "ab\nhéllo wörld\n日本語\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "sort -h du lines",
      command: "printf '1.5M\\tx\\n12\\ty\\n4.0K\\tz\\n2G\\tw\\n' | sort -rh",
      stdout: "2G\tw\n1.5M\tx\n4.0K\tz\n12\ty\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -nk1 cluster",
      command: "printf '3 b\\n1 a\\n20 c\\n' | sort -nk1",
      stdout: "1 a\n3 b\n20 c\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "cut -b", command: "cut -b 1-3 u.txt", stdout: "hé\n日\nab\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "cut -b list", command: "cut -b1,3 a.txt", stdout: "a \na \na \n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "cut --complement -f",
      command: "cut -d, --complement -f2 csv.txt",
      stdout: "k1,w1\nk2,w2\nk3,w3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "cut --complement -c", command: "cut --complement -c1-2 a.txt", stdout: " x\n y\n z\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "cut --output-delimiter",
      command: "cut -d, -f1,3 --output-delimiter=: csv.txt",
      stdout: "k1:w1\nk2:w2\nk3:w3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "cut --output-delimiter space",
      command: "cut -d, -f1,3 --output-delimiter ' ' csv.txt",
      stdout: "k1 w1\nk2 w2\nk3 w3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "cut several files one without newline",
      command: "cut -c1-3 nonl.txt a.txt",
      stdout: "one\nthr\na1 \na2 \na3 \n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "cut -f two files", command: "cut -d' ' -f2 a.txt b.txt", stdout: "x\ny\nz\ny\nq\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "cut -b -2", command: "cut -b -2 a.txt", stdout: "a1\na2\na3\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "wc -L", command: "wc -L a.txt", stdout: "4 a.txt\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "wc -L utf8", command: "wc -L u.txt", stdout: "11 u.txt\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "wc -L stdin", command: "printf 'ab\\nabcd\\n' | wc -L", stdout: "4\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "wc -lL two",
      command: "wc -lL a.txt b.txt | tr -s ' '",
      stdout: " 3 4 a.txt\n 2 4 b.txt\n 5 4 total\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "wc --max-line-length", command: "wc --max-line-length < n.txt", stdout: "2\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "du -b file", command: "du -b a.txt", stdout: "15\ta.txt\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "du -b two files", command: "du -b a.txt nonl.txt", stdout: "15\ta.txt\n18\tnonl.txt\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "du -cb", command: "du -cb a.txt b.txt", stdout: "15\ta.txt\n10\tb.txt\n25\ttotal\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "paste stdin", command: "printf 'a\\nb\\n' | paste", stdout: "a\nb\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "paste -s stdin", command: "printf 'a\\nb\\nc\\n' | paste -s -d,", stdout: "a,b,c\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "paste -sd stdin", command: "seq 4 | paste -sd+", stdout: "1+2+3+4\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "tac a b", command: "tac a.txt b.txt", stdout: "a3 z\na2 y\na1 x\nb2 q\nb1 y\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "tac nonl", command: "tac nonl.txt b.txt", stdout: "three fourone two\nb2 q\nb1 y\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "nl two files",
      command: "nl a.txt b.txt",
      stdout: "     1\ta1 x\n     2\ta2 y\n     3\ta3 z\n     4\tb1 y\n     5\tb2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "nl nonl", command: "nl nonl.txt", stdout: "     1\tone two\n     2\tthree four\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "nl nonl then file",
      command: "nl nonl.txt a.txt",
      stdout: "     1\tone two\n     2\tthree four\n     3\ta1 x\n     4\ta2 y\n     5\ta3 z\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "cut -f3,1 position order",
      command: "cut -d, -f3,1 csv.txt",
      stdout: "k1,w1\nk2,w2\nk3,w3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "cut -c3,1-2 merged",
      command: "cut -c3,1-2 --output-delimiter=: a.txt",
      stdout: "a1: \na2: \na3: \n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "cut -c1,3 output-delimiter",
      command: "cut -c1,3 --output-delimiter=: a.txt",
      stdout: "a: \na: \na: \n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "cut -sd, cluster", command: "printf 'a,b\\nnodelim\\n' | cut -sd, -f2", stdout: "b\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "cut --complement -b", command: "cut --complement -b2- a.txt", stdout: "a\na\na\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "sort -k2,2 -t, -u",
      command: "printf 'x,b\\ny,a\\nz,b\\n' | sort -t, -k2,2 -u",
      stdout: "y,a\nx,b\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -nr",
      command: "printf '10\\n9\\n100\\n-5\\n' | sort -nr",
      stdout: "100\n10\n9\n-5\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -k2g",
      command: "printf 'a 1e2\\nb 5\\nc -1\\n' | sort -k2g",
      stdout: "c -1\nb 5\na 1e2\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "head -n 2 two files",
      command: "head -n 2 a.txt b.txt",
      stdout: "==> a.txt <==\na1 x\na2 y\n\n==> b.txt <==\nb1 y\nb2 q\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "tail -n -2", command: "tail -n -2 n.txt", stdout: "11\n12\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "tac stdin", command: "printf 'a\\nb\\nc' | tac", stdout: "cb\na\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "tac missing",
      command: "tac a.txt nope.txt; echo rc=$?",
      stdout: "a3 z\na2 y\na1 x\nrc=1\n",
      exitCode: 0,
      stderrEmpty: false,
    },
  },
  { ...{ name: "paste - -", command: "seq 4 | paste - -", stdout: "1\t2\n3\t4\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "xargs quotes",
      command: 'printf "a \'b c\' \\"d e\\" f\\\\ g\\n" | xargs -n1 echo',
      stdout: "a\nb c\nd e\nf g\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "xargs exit 123", command: "echo x | xargs false; echo rc=$?", stdout: "rc=123\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "xargs empty runs once", command: "printf '' | xargs echo hi", stdout: "hi\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "cut overlapping ranges",
      command: "echo abcdefgh | cut -c1-3,2-4,5 --output-delimiter=:",
      stdout: "abcd:e\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "cut complement output-delimiter",
      command: "echo abcdefgh | cut -c2,4 --complement --output-delimiter=:",
      stdout: "a:c:efgh\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "find -type l", command: "find . -type l; echo rc=$?", stdout: "rc=0\n", exitCode: 0, stderrEmpty: true } },
  { ...{ name: "find -type f,l", command: "find . -type l -o -name '*.sh' | sort", stdout: "./d/x.sh\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: "find -executable",
      command: "chmod +x d/x.sh; find . -type f -executable",
      stdout: "./d/x.sh\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "find -perm -u+x",
      command: "chmod +x d/x.sh; find . -type f -perm -u+x",
      stdout: "./d/x.sh\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "find -perm /111",
      command: "chmod +x d/x.sh; find . -type f -perm /111",
      stdout: "./d/x.sh\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "find -perm 644",
      command: "chmod +x d/x.sh; find d -type f -perm 644",
      stdout: "d/y.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "find -perm -644",
      command: "chmod +x d/x.sh; find d -type f -perm -644 | sort",
      stdout: "d/x.sh\nd/y.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "find ! -executable",
      command: "chmod +x d/x.sh; find d -type f ! -executable",
      stdout: "d/y.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "ls -p",
      command: "ls -p",
      stdout: "a.txt\nb.txt\ncsv.txt\nd/\nlist.txt\nn.txt\nnonl.txt\nnums.txt\nu.txt\nwords.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "ls -p d",
      command: "mkdir -p d/sub && touch d/sub/k; ls -p d",
      stdout: "sub/\nx.sh\ny.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "ls -1p",
      command: "ls -1p",
      stdout: "a.txt\nb.txt\ncsv.txt\nd/\nlist.txt\nn.txt\nnonl.txt\nnums.txt\nu.txt\nwords.txt\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort w.txt: code point order above U+FFFF (hunt 131)",
      command: "printf '\\360\\237\\230\\200\\n\\357\\274\\241\\n' > w.txt; sort w.txt",
      stdout: "Ａ\n😀\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -u w.txt: code point order above U+FFFF (hunt 131)",
      command: "printf '\\360\\237\\230\\200\\n\\357\\274\\241\\n' > w.txt; sort -u w.txt",
      stdout: "Ａ\n😀\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "sort -r w.txt: code point order above U+FFFF (hunt 131)",
      command: "printf '\\360\\237\\230\\200\\n\\357\\274\\241\\n' > w.txt; sort -r w.txt",
      stdout: "😀\nＡ\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
];
const CASES: ShellCase[] = ROWS.map((c) => ({ files, ...c }));

describe("text commands' options against GNU coreutils and findutils", () => {
  it.each(CASES)("$name", async (c) => {
    expect(await runShellCase(c)).toEqual({ stdout: c.stdout, exitCode: c.exitCode, stderrEmpty: c.stderrEmpty });
  });
});
