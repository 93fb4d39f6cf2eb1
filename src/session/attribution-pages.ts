import type { AttributionRecord, TraceRecord } from "../domain";
import { utf8Length } from "../tools/truncate";
import type { SeqLine } from "./log-reader";

/** A page of a session's attributions, oldest first; `next` is the seq the next page starts after, null on the last. */
export interface AttributionPage {
  attributions: AttributionRecord[];
  next: number | null;
}

/**
 * The attributions among trace lines (in seq order) until the page holds `limit` of them, or the next
 * would take it past `maxBytes` of JSON (a page holds one at least, however large). An attribution
 * carries its verdict's artifact refs, so a count alone does not bound a page: one answer of every
 * attribution passed workerd's 32 MiB RPC limit at about 140 large verdicts (hunt 53). Reading stops
 * at the attribution that starts the next page, so following all pages reads the trace about once.
 */
export async function attributionPage(
  lines: AsyncIterable<SeqLine[]>,
  decode: (line: SeqLine) => TraceRecord,
  bounds: { limit: number; maxBytes: number },
): Promise<AttributionPage> {
  const attributions: AttributionRecord[] = [];
  let bytes = 0;
  let lastSeq = 0;
  for await (const batch of lines) {
    for (const line of batch) {
      const record = decode(line);
      if (record.type !== "attribution") continue;
      const size = utf8Length(line.body);
      const full = attributions.length >= bounds.limit || (attributions.length > 0 && bytes + size > bounds.maxBytes);
      if (full) return { attributions, next: lastSeq };
      attributions.push(record);
      bytes += size;
      lastSeq = line.seq;
    }
  }
  return { attributions, next: null };
}
