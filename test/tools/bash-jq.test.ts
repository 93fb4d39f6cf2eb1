import { describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

/**
 * jq as jq 1.6 runs the filters coding agents write, or 1.7.1 where a row's item says so (hunts 124 and
 * 126): G `del` of several paths or a `select`, H assignments through a missing key, I `@csv`/`@tsv`/
 * `@sh`, J ordering by code point, K regex functions, L type errors, M one bad input among several, N
 * `-j`, `inputs`, `--indent`, format strings. Each row: the item, the command, jq's stdout.
 */
const JQ: [string, string, string][] = [
  ["G", "echo '[1,2,3,4]' | jq -c 'del(.[] | select(. % 2 == 0))'", "[1,3]\n"],
  ["G", 'echo \'{"a":1,"b":2,"c":3}\' | jq -c \'del(.a, .b)\'', '{"c":3}\n'],
  ["G", "echo '{\"a\":[1,2],\"b\":3}' | jq -c 'del(.a[0], .b)'", '{"a":[2]}\n'],
  ["G", "echo '[1,null,{\"a\":null,\"b\":2}]' | jq -c 'del(.. | nulls)'", '[1,{"b":2}]\n'],
  ["G", 'echo \'[{"x":1,"y":2,"z":3}]\' | jq -c \'map(del(.x, .y))\'', '[{"z":3}]\n'],
  ["G", "echo '[1,2,3,4,5]' | jq -c 'del(.[1,3], .[-1])'", "[1,3]\n"],
  ["H", "jq -nc '{} | .a.b.c = 1'", '{"a":{"b":{"c":1}}}\n'],
  ["H", "jq -nc '{} | .count |= . + 1'", '{"count":1}\n'],
  ["H", 'jq -nc \'[{"id":1,"v":0},{"id":2,"v":0}] | (.[] | select(.id == 2) | .v) |= 5\'', '[{"id":1,"v":0},{"id":2,"v":5}]\n'],
  ["H", 'jq -nc \'[{"a":1},{"a":2}] | map(select(.a == 2) |= (.b = 1))\'', '[{"a":1},{"a":2,"b":1}]\n'],
  ["H", 'jq -nc \'{"a":[1,{"b":2}]} | .. |= (if type == "number" then . + 1 else . end)\'', '{"a":[2,{"b":3}]}\n'],
  ["H", 'jq -nc \'{} | getpath(["a","b"]) = 5\'', '{"a":{"b":5}}\n'],
  ["H", "jq -nc '{\"a\":[1,2,3]} | .a[1:] = [9]'", '{"a":[1,9]}\n'],
  ["H", "jq -nc '{\"a\":[1,2,2,3]} | .a -= [2]'", '{"a":[1,3]}\n'],
  ["H", "jq -nc '{\"a\":null} | .a //= 3 | .b += 1'", '{"a":3,"b":1}\n'],
  ["H 1.7", 'jq -nc \'{"a":1,"b":2} | .a |= empty\'', '{"b":2}\n'],
  ["I", 'jq -rn \'[1,"Alice","a b",null,true] | @csv\'', '1,"Alice","a b",,true\n'],
  ["I", 'jq -rn \'["e\\\\f","g\\rh","a\\tb"] | @tsv\'', "e\\\\f\tg\\rh\ta\\tb\n"],
  ["I", "jq -rn '[[1]] | @csv' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["I", "jq -rn '[\"a b\", 1] | @sh'", "'a b' 1\n"],
  ["I", "jq -rn '[1,2] | @text, @html'", "[1,2]\n[1,2]\n"],
  ["J", 'jq -nc \'["b","a","b"] | unique\'', '["a","b"]\n'],
  ["J", 'jq -nc \'["b","a","C"] | sort, min, max\'', '["C","a","b"]\n"C"\n"b"\n'],
  ["J", 'jq -nc \'[{"a":2,"b":1},{"a":1,"b":2},{"a":1,"b":1}] | sort_by(.a, .b) | map(.b)\'', "[1,2,1]\n"],
  ["J", 'jq -nc \'{"b":1,"a":2,"B":3} | keys\'', '["B","a","b"]\n'],
  ["J", 'jq -nc \'{"a":1,"b":2} == {"b":2,"a":1}\'', "true\n"],
  ["K", 'jq -nc \'"aaa" | [match("a"; "g").offset]\'', "[0,1,2]\n"],
  ["K", 'jq -nc \'"a1b22c" | split("[0-9]+"; null)\'', '["a","b","c"]\n'],
  ["K", 'jq -nc \'"😀x" | match("x").offset\'', "1\n"],
  ["K", 'jq -nc \'"foo bar" | gsub("(?<w>\\\\w+)"; "<\\(.w)>")\'', '"<foo> <bar>"\n'],
  ["K", 'jq -nc \'"ab" | [match("(?<n>a)").captures[0].name]\'', '["n"]\n'],
  ["L", "jq -n 'true | length' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["L", "jq -n '1 + \"a\"' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["L", "jq -n '{} | .[0]' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["L", "jq -n '[1,2] | .[\"a\"]' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["L", "jq -n 'null | ascii_downcase' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["L", 'jq -n \'"abc" | test("(")\' 2>/dev/null; echo rc=$?', "rc=5\n"],
  ["L", "jq -n '\"\" | tonumber' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["L", "jq -n '\"0x10\" | tonumber' 2>/dev/null; echo rc=$?", "rc=5\n"],
  ["L", "jq -n '$undefined' 2>/dev/null; echo rc=$?", "rc=3\n"],
  ["M 1.7", 'printf \'{"a":1}\\n{"a":2}\\n{bad\\n\' | jq -c .a 2>/dev/null; echo rc=$?', "1\n2\nrc=2\n"],
  ["M", "printf '{\"a\":1}\\n[1]\\n{\"a\":3}\\n' | jq .a 2>&1 >/dev/null | grep -c 'parse error'", "0\n"],
  ["M", 'printf \'{"a":1}\\n[1]\\n{"a":3}\\n\' | jq .a 2>/dev/null', "1\n3\n"],
  ["N", 'echo \'{"name":"my-app"}\' | jq -j \'.name, "\\n"\'', "my-app\n"],
  ["N", "printf '1 2 3' | jq -nc '[inputs]'", "[1,2,3]\n"],
  ["N", "printf '1 2 3' | jq -n 'reduce inputs as $x (0; . + $x)'", "6\n"],
  ["N", "echo 1 > f.json; jq 'input_filename' f.json", '"f.json"\n'],
  ["N", "jq -n '\"bye\\n\" | halt_error' 2>&1; echo rc=$?", "bye\nrc=5\n"],
  ["N", "jq --indent 4 -n '{\"a\":1}'", '{\n    "a": 1\n}\n'],
  ["N", 'jq -rn \'"a b" | @sh "echo \\(.)"\'', "echo 'a b'\n"],
  ["N", 'jq -rn \'[1,"a"] | @csv "row: \\(.)"\'', 'row: 1,"a"\n'],
  ["N", "jq -nc '\"x\" as $a | {$a}'", '{"a":"x"}\n'],
];

describe("jq against jq 1.6 / 1.7.1", () => {
  it.each(JQ)("%s: %s", async (_item, command, stdout) => {
    const fs = new MemoryWorkspaceFs({});
    await bashTool.execute({ command: `{ ${command}\n} >out.txt 2>/dev/null` }, toolContext(fs, { allowWrite: true }));
    expect(fs.text("out.txt")).toBe(stdout);
  });
});
