// Supabase's postgrest-js, unchanged, with bearer tokens against row-level security (the auth
// spec suite's schema: notes owned by alice and bob, one public).
// Usage: node postgrest_js_auth.cjs http://127.0.0.1:PORT
const { PostgrestClient } = require("@supabase/postgrest-js");
const assert = require("assert");

const url = process.argv[2];
// HS256 tokens for the suite's secret: role rest_web_user, sub alice / bob.
const ALICE = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoicmVzdF93ZWJfdXNlciIsInN1YiI6ImFsaWNlIn0.eQzLzo6JL9eGBSsRwpQt_xmn-bZcrpoFkxa5ZMbcLY8";
const BOB = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJyb2xlIjoicmVzdF93ZWJfdXNlciIsInN1YiI6ImJvYiJ9.Z-_rZyDkyQYCpoO_dXtNdHPo9YGHywSQYqfVGYWavM0";
const as = (token) =>
  new PostgrestClient(url, token ? { headers: { Authorization: `Bearer ${token}` } } : {});

(async () => {
  const ids = async (db) => {
    const r = await db.from("notes").select("id").order("id");
    if (r.error) throw new Error(JSON.stringify(r.error));
    return r.data.map((row) => row.id);
  };
  assert.deepStrictEqual(await ids(as(ALICE)), [1, 2]);
  assert.deepStrictEqual(await ids(as(BOB)), [3]);
  assert.deepStrictEqual(await ids(as(null)), [1]);

  // A point read through the shared round trips: each token still sees only its rows.
  const [a, b] = await Promise.all([
    as(ALICE).from("notes").select("body").eq("id", 2).maybeSingle(),
    as(BOB).from("notes").select("body").eq("id", 2).maybeSingle(),
  ]);
  assert.deepStrictEqual(a.data, { body: "alice only" });
  assert.strictEqual(b.data, null);

  // Alice may not write in bob's name: the policy refuses, 403 with PostgreSQL's code.
  const forged = await as(ALICE).from("notes").insert({ id: 9, owner: "bob", body: "x" });
  assert.strictEqual(forged.status, 403);
  assert.strictEqual(forged.error.code, "42501");
  // She may write her own, and reads it back.
  const own = await as(ALICE)
    .from("notes")
    .insert({ id: 10, owner: "alice", body: "mine" })
    .select("id, body")
    .single();
  assert.deepStrictEqual(own.data, { id: 10, body: "mine" });

  // A forged token: 401 with PostgREST's code.
  const bad = await as(ALICE.slice(0, -2) + "xx").from("notes").select("id");
  assert.strictEqual(bad.status, 401);
  assert.strictEqual(bad.error.code, "PGRST301");
  console.log("postgrest-js with JWTs: ok");
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
