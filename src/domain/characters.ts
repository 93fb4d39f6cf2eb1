/**
 * Characters of a text as the API's limits count them: code points, so an emoji is one. zod's string
 * lengths, JSON Schema's `maxLength` and SQLite's `LENGTH` count the same way; `String.length`
 * counts UTF-16 units, an emoji two.
 */
export function characterCount(text: string): number {
  let count = text.length;
  for (let i = 0; i + 1 < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0xd800 || unit > 0xdbff) continue;
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) {
      count--; // a surrogate pair is one character
      i++;
    }
  }
  return count;
}
