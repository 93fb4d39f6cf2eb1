import type { TraceRecord } from "../domain";
import { encodeCursor } from "../domain";
import { utf8Length } from "../tools/truncate";
import type { SeqLine } from "./log-reader";

/**
 * The API's page of a session's attributions, `{"attributions":[...],"nextCursor":...}` (oldest
 * first; the cursor names the seq the next page starts after, null on the last), as JSON text in
 * parts, one attribution at a time: the attributions among trace lines (in seq order) until the page
 * holds `limit` of them, or the next would take it past `maxBytes` of JSON (a page holds one at least,
 * however large). An attribution carries its verdict's artifact refs, so a count alone does not bound
 * a page (hunt 53: one answer of every attribution passed workerd's 32 MiB RPC limit), and a page is
 * never held whole (hunt 86: 32 pages of 4 MB built at once held over 128 MB of an isolate). Reading
 * stops at the attribution that starts the next page, so following all pages reads the trace about
 * once. The first part comes after the first batch of lines is read: a trace that cannot be read is
 * an error before anything is answered.
 */
export async function* attributionPageJson(
  lines: AsyncIterable<SeqLine[]>,
  decode: (line: SeqLine) => TraceRecord,
  bounds: { limit: number; maxBytes: number },
): AsyncGenerator<string> {
  let head = '{"attributions":[';
  let count = 0;
  let bytes = 0;
  let lastSeq = 0;
  let next: number | null = null;
  pages: for await (const batch of lines) {
    for (const line of batch) {
      const record = decode(line);
      if (record.type !== "attribution") continue;
      const size = utf8Length(line.body);
      if (count >= bounds.limit || (count > 0 && bytes + size > bounds.maxBytes)) {
        next = lastSeq;
        break pages;
      }
      yield `${head}${count > 0 ? "," : ""}${JSON.stringify(record)}`;
      head = "";
      count++;
      bytes += size;
      lastSeq = line.seq;
    }
  }
  yield `${head}],"nextCursor":${JSON.stringify(next === null ? null : encodeCursor({ position: next }))}}`;
}
