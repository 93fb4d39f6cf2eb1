import assert from "node:assert/strict";
import { test } from "node:test";
import { Store } from "../src/store.js";

test("set, get, delete", () => {
  const store = new Store();
  store.set("a", "1");
  assert.equal(store.get("a"), "1");
  assert.equal(store.delete("a"), true);
  assert.equal(store.get("a"), undefined);
});
