import { describe, expect, it } from "vitest";
import { bashTool } from "../../src/tools/bash";
import { MemoryWorkspaceFs, toolContext } from "../helpers/memory-fs";

/**
 * awk as gawk 5.2.1 and mawk 1.3.4 run the one-liners coding agents write (hunts 124 and 125): A an unset
 * value compared with a number, B `$1^2`, C `split` of blank-led text, D printf of `4.0K`, E printf's
 * flags and rounding, F `close()` of a `getline` file, G `-f`, `--`, `-`, `-v FS=`, `RS`, H
 * concatenation against `~`. Each row: the item, the command, the real awks' stdout and exit code.
 */
const REAL: [string, string, string, number][] = [
  ["A", 'awk \'BEGIN{ if (x == 0) print "zero"; else print "nonzero" }\'', "zero\n", 0],
  ["A", 'awk \'BEGIN{ print (x != 0), (x >= 0), (x < 1), (x == ""), (x < "a") }\'', "0 1 1 1 1\n", 0],
  ["A", 'awk \'BEGIN{ if (seen["k"] == 0) print "zero"; else print "nonzero" }\'', "zero\n", 0],
  ["A", "printf '%s\\n' 3 -1 | awk '$1 < lo { lo = $1 } END { print \"[\" lo \"]\" }'", "[-1]\n", 0],
  ["A", "printf '%s\\n' -5 -2 -9 | awk '$1 > max { max = $1 } END { print \"[\" max \"]\" }'", "[]\n", 0],
  ["B", "echo '3 4' | awk '{ print $1^2, $NF^2, -$1^2 }'", "9 16 -9\n", 0],
  ["B", "seq 4 | awk '{ ss += $1^2 } END { print ss }'", "30\n", 0],
  ["B", "echo '2 3 4' | awk '{ i = 2; print $i^2, $(i+1), $NF-1, $i++, i, $1**3 }'", "9 4 3 3 2 8\n", 0],
  ["C", "printf '   12 src/a.ts\\n' | awk '{ n = split($0, p); print n, p[1], p[2] }'", "2 12 src/a.ts\n", 0],
  ["C", 'awk \'BEGIN{ n = split(" \\t a\\tb \\n", p); print n, "[" p[1] "]", "[" p[2] "]" }\'', "2 [a] [b]\n", 0],
  ["C", 'awk \'BEGIN{ n = split("  x  ", p, " "); print n, "[" p[1] "]" }\'', "1 [x]\n", 0],
  ["D", "echo '4.0K' | awk '{ printf \"%d %.1f %x %o %e\\n\", $1, $1, $1, $1, $1 }'", "4 4.0 4 4 4.000000e+00\n", 0],
  ["D", "echo '12ms 3.5kg abc' | awk '{ printf \"%d %i %.2f %g %d\\n\", $1, $1, $2, $2, $3 }'", "12 12 3.50 3.5 0\n", 0],
  ["D", "awk '{ printf \"%5.1f\\n\", $1 }' du.txt", "  4.0\n128.0\n  1.5\n 12.0\n  2.0\n", 0],
  [
    "E",
    "awk 'BEGIN{ printf \"%08.3f|%-8.2f|%+.1f|% .2f|%+08.2f\\n\", 3.14159, 2.5, 2, 1.5, -2.25 }'",
    "0003.142|2.50    |+2.0| 1.50|-0002.25\n",
    0,
  ],
  [
    "E",
    "awk 'BEGIN{ printf \"%012.4e|%-12.3e|%+e|%E\\n\", 3.14159, 12345, 0.5, 1234.5 }'",
    "003.1416e+00|1.234e+04   |+5.000000e-01|1.234500E+03\n",
    0,
  ],
  [
    "E",
    "awk 'BEGIN{ printf \"%010g|%-10g|%+g|%#g|%#.3g|%G\\n\", 3.5, 2, 7, 1.5, 1, 1e-10 }'",
    "00000003.5|2         |+7|1.50000|1.00|1E-10\n",
    0,
  ],
  [
    "E",
    "awk 'BEGIN{ printf \"%#x|%#X|%#o|%#o|%#x|%08x|%-6x|%.4x\\n\", 255, 255, 8, 0, 0, 255, 10, 5 }'",
    "0xff|0XFF|010|0|0|000000ff|a     |0005\n",
    0,
  ],
  ["E", "awk 'BEGIN{ printf \"%u|%5u|%-5u|%05u\\n\", 42, 7, 7, 7 }'", "42|    7|7    |00007\n", 0],
  [
    "F",
    'awk \'{ while ((getline l < "b.txt") > 0) print $1, l; close("b.txt") }\' a.txt',
    "a1 b1 y\na1 b2 q\na2 b1 y\na2 b2 q\na3 b1 y\na3 b2 q\n",
    0,
  ],
  ["F", 'awk \'BEGIN{ getline x < "a.txt"; close("a.txt"); getline y < "a.txt"; print x "|" y }\'', "a1 x|a1 x\n", 0],
  ["F", 'awk \'BEGIN{ print close("a.txt"); getline x < "a.txt"; print close("a.txt") }\'', "-1\n0\n", 0],
  ["G", "printf '{print NR\": \"$2}\\n' > p.awk; awk -f p.awk a.txt", "1: x\n2: y\n3: z\n", 0],
  ["G", "printf 'BEGIN{x=1}\\n' > p1.awk; printf 'END{print x, NR}\\n' > p2.awk; awk -f p1.awk -f p2.awk a.txt", "1 3\n", 0],
  ["G", "printf 'NR==2\\n' > p.awk; cat a.txt | awk -f p.awk", "a2 y\n", 0],
  ["G", "awk -f nope.awk a.txt; echo rc=$?", "rc=2\n", 0],
  ["G", "awk -- '{print $1}' a.txt", "a1\na2\na3\n", 0],
  ["H", "echo abc | awk -v p=x '$0 ~ \"^\" p'", "", 0],
  ["H", 'echo abc | awk -v p=a \'{ print ($0 ~ "^" p), ($0 !~ p "$"), $0 ~ "b" "c" }\'', "1 1 1\n", 0],
  ["H", 'echo \'a b\' | awk \'{ if ($1 " " $2 != "a b") print "ne"; else print "eq" }\'', "eq\n", 0],
];

const files: Record<string, string> = {
  "du.txt": "4.0K\t./docs\n128K\t./src\n1.5M\t./node_modules\n12\t./x\n2G\t./big\n",
  "a.txt": "a1 x\na2 y\na3 z\n",
  "b.txt": "b1 y\nb2 q\n",
};

describe("awk against gawk and mawk", () => {
  it.each(REAL)("%s: %s", async (_item, command, stdout, exitCode) => {
    const fs = new MemoryWorkspaceFs(files);
    const out = await bashTool.execute({ command: `{ ${command}\n} 2>/dev/null; echo "rc=$?"` }, toolContext(fs, { allowWrite: true }));
    expect(out.text).toBe(`${stdout}rc=${exitCode}`);
  });
});
