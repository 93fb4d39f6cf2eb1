import { clipText, isRecord } from "../domain";

/** What a provider said about a failure, whatever the shape of its error body. */
export interface ProviderError {
  /** The provider's own words; "" when it gave none. */
  message: string;
  code?: string | number;
  type?: string;
}

/** Members that hold the words, best first: NestJS/Fastify put the HTTP phrase in `error` and the reason in `message`. */
const MESSAGE_KEYS = ["message", "detail", "msg", "error", "errors"] as const;

/** The words in an error value: a string, the first message member of an object, the items of an array. */
function messageOf(value: unknown): string {
  if (typeof value === "string") return value.trim();
  if (Array.isArray(value))
    return value
      .map(messageOf)
      .filter((text) => text !== "")
      .join("; ");
  if (!isRecord(value)) return "";
  // A FastAPI validation error names the offending field in `loc`.
  if (typeof value.msg === "string" && Array.isArray(value.loc)) return `${value.loc.join(".")}: ${value.msg}`;
  for (const key of MESSAGE_KEYS) {
    const text = messageOf(value[key]);
    if (text !== "") return text;
  }
  return "";
}

/** The object that carries `code` and `type`: unwraps Gemini's `[{error}]` and OpenAI's `{error: {...}}`. */
function errorRecord(value: unknown): Record<string, unknown> {
  if (Array.isArray(value)) return errorRecord(value[0]);
  if (!isRecord(value)) return {};
  return isRecord(value.error) || Array.isArray(value.error) ? errorRecord(value.error) : value;
}

/**
 * Reads a parsed error body or in-stream error object of any common shape: `{error: {message, type,
 * code}}`, `{error: "..."}`, `{message}`, `{detail: "..."}`, `{detail: [{loc, msg}]}`, `{errors:
 * [{message}]}`, `[{error: {...}}]`, or a bare string.
 */
export function readErrorJson(json: unknown): ProviderError {
  const record = errorRecord(json);
  const error: ProviderError = { message: messageOf(json) };
  if (typeof record.code === "string" || typeof record.code === "number") error.code = record.code;
  if (typeof record.type === "string") error.type = record.type;
  return error;
}

/** A web page's words rarely say more than its title and first heading; the rest is navigation and boilerplate. */
const MAX_HTML_TEXT_CHARS = 200;

/**
 * Reads the raw body of a non-OK HTTP answer: JSON of any shape (see readErrorJson; kept verbatim when
 * it has no message member), an HTML page (its title and first text), or plain text.
 */
export function readErrorBody(text: string, contentType: string | null): ProviderError {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    const html = /html/i.test(contentType ?? "") || /^\s*<(!doctype html|html)\b/i.test(text);
    return { message: html ? htmlText(text) : collapse(text) };
  }
  const error = readErrorJson(json);
  return error.message === "" ? { ...error, message: collapse(text) } : error;
}

/** The title, then the text of the page without head, scripts, styles and comments, clipped. */
function htmlText(html: string): string {
  const title = collapse(decodeEntities(stripTags(/<title[^>]*>([\s\S]*?)<\/title>/i.exec(html)?.[1] ?? "")));
  const body = collapse(
    decodeEntities(stripTags(html.replace(/<!--[\s\S]*?-->/g, " ").replace(/<(head|script|style)\b[\s\S]*?<\/\1\s*>/gi, " "))),
  );
  const text = body.startsWith(title) ? body : [title, body].filter((part) => part !== "").join(" - ");
  return clipText(text, MAX_HTML_TEXT_CHARS + 1);
}

function stripTags(html: string): string {
  return html.replace(/<[^>]*>/g, " ");
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (entity, name: string) => {
    if (name[0] !== "#") return ENTITIES[name.toLowerCase()] ?? entity;
    const codePoint = name[1] === "x" || name[1] === "X" ? Number.parseInt(name.slice(2), 16) : Number(name.slice(1));
    return codePoint <= 0x10ffff ? String.fromCodePoint(codePoint) : entity;
  });
}

function collapse(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
