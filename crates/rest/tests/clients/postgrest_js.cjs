// Supabase's postgrest-js, unchanged, against Sluice's REST API over the fixtures schema.
// Usage: node postgrest_js.cjs http://127.0.0.1:PORT
const { PostgrestClient } = require("@supabase/postgrest-js");
const assert = require("assert");

const url = process.argv[2];
const db = new PostgrestClient(url);

function ok(result, what) {
  if (result.error) {
    throw new Error(`${what}: ${JSON.stringify(result.error)}`);
  }
  return result;
}

(async () => {
  // select with filters, order, embedding (many-to-one through a hint, one-to-many)
  let r = ok(
    await db
      .from("books")
      .select("title, author:authors!author_id(name), reviews(stars)")
      .gte("pages", 200)
      .order("id", { ascending: true })
      .limit(2),
    "select with embedding"
  );
  assert.deepStrictEqual(r.data, [
    { title: "The Dispossessed", author: { name: "Ursula K. Le Guin" }, reviews: [] },
    { title: "Guards! Guards!", author: { name: "Terry Pratchett" }, reviews: [{ stars: 5 }] },
  ]);

  // more filter builders: in, is, ilike, contains, or, not
  r = ok(await db.from("books").select("id").in("author_id", [2, 3]).order("id"), "in");
  assert.deepStrictEqual(r.data.map((b) => b.id), [3, 4, 5]);
  r = ok(await db.from("books").select("id").is("price", null), "is null");
  assert.deepStrictEqual(r.data, [{ id: 5 }]);
  r = ok(await db.from("books").select("id").ilike("title", "%earth%"), "ilike");
  assert.deepStrictEqual(r.data, [{ id: 1 }]);
  r = ok(await db.from("books").select("id").contains("tags", ["comic"]).order("id"), "contains");
  assert.deepStrictEqual(r.data.map((b) => b.id), [3, 4]);
  r = ok(await db.from("books").select("id").or("pages.lt.170,id.eq.2").order("id"), "or");
  assert.deepStrictEqual(r.data.map((b) => b.id), [2, 5]);
  r = ok(await db.from("books").select("id").not("editor_id", "is", null).order("id"), "not");
  assert.deepStrictEqual(r.data.map((b) => b.id), [1, 3, 4]);

  // count and range
  r = ok(await db.from("books").select("id", { count: "exact" }).range(0, 1), "count");
  assert.strictEqual(r.count, 5);
  assert.strictEqual(r.data.length, 2);
  r = ok(await db.from("books").select("*", { count: "exact", head: true }), "head count");
  assert.strictEqual(r.count, 5);

  // single and maybeSingle
  r = ok(await db.from("authors").select("name").eq("id", 3).single(), "single");
  assert.deepStrictEqual(r.data, { name: "Neil Gaiman" });
  r = await db.from("authors").select("name").eq("id", 99).single();
  assert.ok(r.error, "single of no row is an error");
  assert.strictEqual(r.error.code, "PGRST116");
  r = ok(await db.from("authors").select("name").eq("id", 99).maybeSingle(), "maybeSingle");
  assert.strictEqual(r.data, null);

  // insert, upsert, update, delete
  r = ok(await db.from("genres").insert({ id: 40, name: "gothic" }).select(), "insert");
  assert.deepStrictEqual(r.data, [{ id: 40, name: "gothic" }]);
  r = ok(
    await db.from("genres").insert([{ id: 41, name: "sagas" }, { id: 42, name: "myths" }]),
    "bulk insert"
  );
  assert.strictEqual(r.status, 201);
  r = ok(
    await db.from("genres").upsert([{ id: 41, name: "norse sagas" }, { id: 43, name: "fables" }]).select().order("id"),
    "upsert"
  );
  assert.deepStrictEqual(r.data, [
    { id: 41, name: "norse sagas" },
    { id: 43, name: "fables" },
  ]);
  r = ok(await db.from("genres").update({ name: "greek myths" }).eq("id", 42).select("name"), "update");
  assert.deepStrictEqual(r.data, [{ name: "greek myths" }]);
  r = ok(await db.from("genres").delete().gte("id", 40).select("id"), "delete");
  assert.deepStrictEqual(r.data.map((g) => g.id).sort(), [40, 41, 42, 43]);
  r = await db.from("genres").insert({ id: 1, name: "duplicate" });
  assert.strictEqual(r.error.code, "23505");
  assert.strictEqual(r.status, 409);

  // rpc: scalar, set of rows filtered, GET for a stable function
  r = ok(await db.rpc("add_them", { a: 2, b: 40 }), "rpc scalar");
  assert.strictEqual(r.data, 42);
  r = ok(await db.rpc("books_by", { author: 1 }).select("title").order("title"), "rpc rows");
  assert.deepStrictEqual(r.data, [{ title: "A Wizard of Earthsea" }, { title: "The Dispossessed" }]);
  r = ok(await db.rpc("greet", { name: "js" }, { get: true }), "rpc get");
  assert.strictEqual(r.data, "Hello js!");
  // rpc over a function returning TABLE (...): filters, select, order, limit and a count
  // apply to its result columns, as Supabase apps chain them
  r = ok(
    await db
      .rpc("titles_table", {}, { count: "exact" })
      .select("title")
      .gt("pages", 200)
      .order("pages", { ascending: false })
      .order("title")
      .limit(2),
    "rpc table filtered"
  );
  assert.deepStrictEqual(r.data, [{ title: "The Dispossessed" }, { title: "Good Omens" }]);
  assert.strictEqual(r.count, 3);
  r = ok(await db.rpc("page_counts").lt("page_counts", 200).order("page_counts"), "rpc setof scalar");
  assert.deepStrictEqual(r.data, [162, 183]);
  r = await db.rpc("titles_table").eq("nope", 1);
  assert.strictEqual(r.error.code, "42703");
  r = await db.rpc("fail_politely", { message: "no" });
  assert.strictEqual(r.error.code, "P0001");
  assert.strictEqual(r.error.hint, "ask nicely");

  console.log("postgrest-js ok");
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
