// RunProgress: what the terminal client writes about a run. Run by `npm run test:client`.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { RunProgress } from "../../client/progress.mjs";

/** An output that keeps what is written. */
const sink = () => {
  const out = { text: "", isTTY: false, columns: 80, write: (chunk) => (out.text += chunk) };
  return out;
};

describe("RunProgress.reconnecting", () => {
  it("writes out the control characters of a reason that quotes a proxy's error page (hunt 115: a title, a clipboard write, a clear screen)", () => {
    const stdout = sink();
    const stderr = sink();
    const progress = new RunProgress({ stdout, stderr });
    progress.reconnecting({ lastSeq: 7, reason: "HTTP 502: \u001b]0;pwned\u0007\u001b]52;c;ZXZpbA==\u0007\u001b[2J bad gateway" });
    assert.equal(stderr.text, "reconnecting after event 7: HTTP 502: ␛]0;pwned␇␛]52;c;ZXZpbA==␇␛[2J bad gateway\n");
    assert.equal(stdout.text, "");
  });
});
