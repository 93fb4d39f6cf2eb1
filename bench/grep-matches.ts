/** Matching lines the grep tool found: from its "Showing matches 1-100 of N" notice, or the lines it printed. */
export function totalMatches(text: string): number {
  const notice = /\n\n\[Showing matches \d+-\d+ of (\d+) \(/.exec(text);
  if (notice) return Number(notice[1]);
  if (text.startsWith("No matches found")) return 0;
  return (text.split("\n\n[")[0] ?? "").split("\n").length;
}
