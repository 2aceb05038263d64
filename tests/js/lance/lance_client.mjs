// lance_client.mjs: drives deltad's Lance Namespace REST API with the real LanceDB client
// (@lancedb/lancedb, pinned in package.json). Usage: node lance_client.mjs URI TOKEN WORKDIR.
// Runs one scenario step by step and prints one JSON object: {step: {ok, value | error}};
// tests/integration/test_lance_client.py starts deltad, runs this and checks every step.
import * as lancedb from "@lancedb/lancedb";

const [uri, token, workdir] = process.argv.slice(2);
const out = {};

async function step(name, fn) {
  try {
    out[name] = { ok: true, value: (await fn()) ?? null };
  } catch (e) {
    out[name] = { ok: false, error: String(e && e.message ? e.message : e) };
  }
}

const bearer = await lancedb.connectNamespace("rest", {
  uri,
  headers: { Authorization: `Bearer ${token}`, "x-lance-ctx-trace_id": "t-1" },
});
const apiKey = await lancedb.connectNamespace("rest", { uri, headers: { "x-api-key": token } });
const anon = await lancedb.connectNamespace("rest", { uri, headers: { "x-api-key": "wrong" } });

// namespaces, three levels deep
await step("create_l1", () => bearer.createNamespace(["js_cat"], { properties: { owner: "ralph" } }));
await step("create_l1_again", () => bearer.createNamespace(["js_cat"]));
await step("create_l1_exist_ok", () => bearer.createNamespace(["js_cat"], { mode: "exist_ok" }));
await step("create_l2", () => bearer.createNamespace(["js_cat", "js_sch"], { properties: { tier: "gold" } }));
await step("create_l3", () => bearer.createNamespace(["js_cat", "js_sch", "deep.er"]));
await step("create_orphan", () => bearer.createNamespace(["no_such", "child"]));
await step("list_root", () => bearer.listNamespaces());
await step("list_l1", () => bearer.listNamespaces(["js_cat"]));
await step("list_l2", () => apiKey.listNamespaces(["js_cat", "js_sch"]));
await step("list_missing", () => bearer.listNamespaces(["no_such"]));
await step("describe_l1", () => bearer.describeNamespace(["js_cat"]));
await step("describe_l2", () => apiKey.describeNamespace(["js_cat", "js_sch"]));
await step("describe_missing", () => bearer.describeNamespace(["js_cat", "nope"]));

// paging through the client
for (const n of ["p1", "p2", "p3"]) await bearer.createNamespace(["js_cat", "js_sch", "deep.er", n]);
await step("page1", () => bearer.listNamespaces(["js_cat", "js_sch", "deep.er"], { limit: 2 }));
const tok = out.page1.ok ? out.page1.value.pageToken : undefined;
await step("page2", () => bearer.listNamespaces(["js_cat", "js_sch", "deep.er"], { limit: 2, pageToken: tok }));

// a real Lance table, written by LanceDB on the local disk, registered in deltad (by the
// python side, through the REST API), found and opened through the namespace
const local = await lancedb.connect(workdir);
await local.createTable("pts", [{ id: 1, v: "a" }, { id: 2, v: "b" }, { id: 3, v: "c" }]);
await step("table_names_empty", () => bearer.tableNames(["js_cat", "js_sch"]));
console.log(JSON.stringify({ ready: true }));
// wait for the python side to register the table (it writes "go" on stdin)
await new Promise((resolve) => process.stdin.once("data", resolve));
await step("table_names", () => bearer.tableNames(["js_cat", "js_sch"]));
await step("table_names_after", () => bearer.tableNames(["js_cat", "js_sch"], { startAfter: "pts" }));
await step("open_count", async () => (await bearer.openTable("pts", ["js_cat", "js_sch"])).countRows());
await step("open_missing", () => bearer.openTable("nope", ["js_cat", "js_sch"]));

// drops
await step("drop_nonempty", () => bearer.dropNamespace(["js_cat"]));
await step("drop_missing", () => bearer.dropNamespace(["js_cat", "gone"]));
await step("drop_missing_skip", () => bearer.dropNamespace(["js_cat", "gone"], { mode: "skip" }));
await step("drop_table", () => bearer.dropTable("pts", ["js_cat", "js_sch"]));
await step("table_names_dropped", () => bearer.tableNames(["js_cat", "js_sch"]));
await step("drop_l3_cascade", () => bearer.dropNamespace(["js_cat", "js_sch", "deep.er"], { behavior: "cascade" }));
await step("list_l2_after", () => bearer.listNamespaces(["js_cat", "js_sch"]));
await step("drop_l1_cascade", () => apiKey.dropNamespace(["js_cat"], { behavior: "cascade" }));
await step("list_root_after", () => bearer.listNamespaces());

// authentication
await step("bad_token", () => anon.listNamespaces());

console.log(JSON.stringify(out));
process.exit(0);
