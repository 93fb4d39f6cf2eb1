import { CHARS_PER_TOKEN, sliceWhole } from "../domain";
import { formatSize, truncateHead, utf8Length, withNotices } from "../tools/truncate";

/**
 * The last guard of the per-result token budget. The tools already cut their output to the run's
 * byte budget with their own continuation notices (read: `Use offset=N to continue`); whatever still
 * passes `maxTokens` (an error text, a diff) is cut here, head first, with the same kind of notice.
 */
export function fitToolResult(text: string, maxTokens: number): string {
  const maxChars = maxTokens * CHARS_PER_TOKEN;
  if (text.length <= maxChars) return text;
  // Leave room for the notice itself.
  const shown = truncateHead(text, { maxLines: Number.MAX_SAFE_INTEGER, maxBytes: Math.max(0, maxChars - 200) });
  const total = utf8Length(text);
  const notice = `Result cut to ${formatSize(shown.outputBytes)} of ${formatSize(total)} (${shown.outputLines} of ${shown.totalLines} lines) to fit the context budget. Ask for less at a time (offset/limit, a narrower path or pattern) to see the rest`;
  const body = shown.firstLineExceedsLimit ? sliceWhole(text, Math.max(0, maxChars - 200)) : shown.content;
  return withNotices(body, [notice]);
}
