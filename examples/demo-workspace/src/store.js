/** The values, by key. Lost when the process ends. */
export class Store {
  #values = new Map();

  get(key) {
    return this.#values.get(key);
  }

  set(key, value) {
    this.#values.set(key, value);
  }

  delete(key) {
    return this.#values.delete(key);
  }
}
