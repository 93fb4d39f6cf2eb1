import { describe, expect, it } from "vitest";
import { runShellCase, type ShellCase } from "../helpers/shell-cases";

/**
 * The constructs agents write (hunt 127): trap, set -u with defaults, a command held in a variable,
 * ${...} and $(...) inside $(( )), "${a[*]}" with IFS, word splitting, local -A, for without in, shift;
 * traps of $(...) and pipeline elements kept apart (hunt 131). Each case: the command, its files, and
 * GNU bash 5.2's stdout, exit code and whether stderr was empty.
 */
const files: Record<string, string> = { "a.txt": "a1 x\na2 y\na3 z\n", "list.txt": "one\ntwo words\n  spaced  \n\nlast\n" };

const ROWS: ShellCase[] = [
  {
    ...{
      name: "command name from an unquoted variable is word-split",
      command: 'cmd="echo hello world"; $cmd; c="printf %s-"; $c a b; echo',
      stdout: "hello world\na-b-\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: 'command from an array "${arr[@]}"',
      command: 'args=(printf "<%s>" "a b" c); "${args[@]}"; echo; run() { "$@"; }; run echo ok',
      stdout: "<a b><c>\nok\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  { ...{ name: "empty unquoted command word still skipped", command: "e=; $e echo hi", stdout: "hi\n", exitCode: 0, stderrEmpty: true } },
  {
    ...{
      name: 'set -u: whole-word "${x:-default}"',
      command:
        'set -u; echo "${undefined_var:-default}"; [ -z "${1:-}" ] && echo empty; arr=(1); echo "${arr[5]:-x}"; declare -A m; echo "${m[k]:-d}"',
      stdout: "default\nempty\nx\nd\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: 'set -u: "${1-}" in a function',
      command: 'set -u; f() { echo "[${1-}] [${2:-none}]"; }; f; f a',
      stdout: "[] [none]\n[a] [none]\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "set -u still fails on a bare unset variable",
      command: '(set -u; echo "$nope"; echo after) 2>/dev/null || echo failed',
      stdout: "failed\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "trap EXIT in a subshell, with exit and set -e",
      command:
        '(trap "echo bye \\$?" EXIT; echo hi; exit 2); echo "rc=$?"; (set -e; trap "echo cleanup" EXIT; false; echo not); echo "rc=$?"',
      stdout: "hi\nbye 2\nrc=2\ncleanup\nrc=1\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "trap replaced, reset, listed",
      command:
        '(trap "echo one" EXIT; trap "echo two" EXIT; :); (trap "echo x" EXIT; trap - EXIT; echo ok); trap "rm -f t" EXIT INT; trap -p',
      stdout: "two\nok\ntrap -- 'rm -f t' EXIT\ntrap -- 'rm -f t' SIGINT\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{ name: "trap with a bad signal", command: 'trap "echo x" NOSUCH; echo "rc=$?"', stdout: "rc=1\n", exitCode: 0, stderrEmpty: false },
  },
  {
    ...{
      name: "set -e; trap EXIT does not kill the script",
      command: 'set -e; trap "true" EXIT; echo alive',
      stdout: "alive\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "top-level trap EXIT runs at the end",
      command: "cleanup() { echo \"cleaning $1\"; }; trap 'cleanup now' EXIT; echo work",
      stdout: "work\ncleaning now\n",
      exitCode: 0,
      stderrEmpty: true,
      raw: true,
    },
  },
  {
    ...{
      name: "top-level trap EXIT after exit N keeps N",
      command: "trap 'echo trapped $?' EXIT; echo start; exit 3",
      stdout: "start\ntrapped 3\n",
      exitCode: 3,
      stderrEmpty: true,
      raw: true,
    },
  },
  {
    ...{
      name: "$(func) inside $(( ))",
      command:
        "f() { echo 3; }; echo $(( $(f) + 1 )); fact() { local n=$1; if (( n <= 1 )); then echo 1; else echo $(( n * $(fact $((n-1))) )); fi; }; fact 5",
      stdout: "4\n120\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "${assoc[k]:-0} inside $(( ))",
      command:
        'declare -A cnt; for w in a b a c a; do cnt[$w]=$(( ${cnt[$w]:-0} + 1 )); done; echo "${cnt[a]} ${cnt[b]} ${cnt[c]}"; x=5; echo $(( ${x} * 2 )) $(( ${#x} + 1 )) $(( ${y:-3} ))',
      stdout: "3 1 1\n10 2 3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "word splitting: expansion starting with IFS white space after a literal",
      command: 'x=" b"; echo a$x; y="  lead"; echo [$y]; z=" b c "; printf "<%s>" a$z"d"; echo',
      stdout: "a b\n[ lead]\n<a><b><c><d>\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "local -A",
      command:
        'f() { local -A m=([a]=1 [b]=2); m[c]=3; echo "${m[a]} ${#m[@]}"; local -A n; n[x]=y; echo "${n[x]}"; }; f; echo "[${m[a]}][${n[x]}]"',
      stdout: "1 3\ny\n[][]\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "for without in, in a function",
      command: 'f() { for a; do echo "[$a]"; done; }; f "1 2" "" 3; set -- "x y" z; for v; do echo "<$v>"; done',
      stdout: "[1 2]\n[]\n[3]\n<x y>\n<z>\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: '"${a[*]}" in an assignment joins with IFS',
      command:
        'a=(x y z); IFS=,; s="${a[*]}"; t="${a[@]}"; echo "$s|$t"; unset IFS; b=(3 1 2); IFS=$\'\\n\' sorted=($(sort <<<"${b[*]}")); unset IFS; echo "${sorted[@]}"',
      stdout: "x,y,z|x y z\n1 2 3\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "shift past the end is silent",
      command: 'shift; echo "rc=$?"; set -- a b; shift 3; echo "rc=$? $#"',
      stdout: "rc=1\nrc=1 2\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "while read loop (unchanged)",
      command: 'while IFS= read -r line; do echo "[$line]"; done < list.txt',
      stdout: "[one]\n[two words]\n[  spaced  ]\n[]\n[last]\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "a trap set in $(...) is its own (hunt 131)",
      command: "x=$(trap 'echo inner' EXIT; echo val); echo [$x]; echo end",
      stdout: "[val inner]\nend\n",
      exitCode: 0,
      stderrEmpty: true,
    },
  },
  {
    ...{
      name: "trap - EXIT in $(...) leaves the caller its trap (hunt 131)",
      command: "trap 'echo cleanup' EXIT; x=$(trap - EXIT; echo v); echo end",
      stdout: "end\ncleanup\n",
      exitCode: 0,
      stderrEmpty: true,
      raw: true,
    },
  },
  {
    ...{
      name: "a trap in a pipeline element runs at its end (hunt 131)",
      command: "trap 'echo cleanup' EXIT; echo a | { trap 'echo other' EXIT; cat >/dev/null; }; echo end",
      stdout: "other\nend\ncleanup\n",
      exitCode: 0,
      stderrEmpty: true,
      raw: true,
    },
  },
];
const CASES: ShellCase[] = ROWS.map((c) => ({ files, ...c }));

describe("the shell language against GNU bash 5.2", () => {
  it.each(CASES)("$name", async (c) => {
    expect(await runShellCase(c)).toEqual({ stdout: c.stdout, exitCode: c.exitCode, stderrEmpty: c.stderrEmpty });
  });
});
