import type { AgentMessage } from "../domain";

/**
 * The session's messages, loaded once and then kept current by the appends that follow. A load that
 * raced an append (the append landed while the load was reading R2) is not cached, so the cache never
 * misses a message.
 */
export class MessageHistory {
  private cache: AgentMessage[] | null = null;
  /** Bumped on every message append. */
  private version = 0;

  constructor(private readonly read: () => Promise<AgentMessage[]>) {}

  async load(): Promise<AgentMessage[]> {
    while (!this.cache) {
      const version = this.version;
      const loaded = await this.read();
      if (version === this.version) this.cache = loaded;
    }
    return [...this.cache];
  }

  appended(messages: readonly AgentMessage[]): void {
    this.version++;
    this.cache?.push(...messages);
  }
}
