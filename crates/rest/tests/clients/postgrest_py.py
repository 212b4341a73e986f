"""postgrest-py (Supabase's Python client), unchanged, against Sluice's REST API.

Usage: python postgrest_py.py http://127.0.0.1:PORT
"""
import sys

from postgrest import SyncPostgrestClient
from postgrest.exceptions import APIError

url = sys.argv[1]
with SyncPostgrestClient(url) as db:
    r = (
        db.from_("books")
        .select("title, author:authors!author_id(name), genres(name)")
        .eq("id", 3)
        .execute()
    )
    row = r.data[0]
    assert row["title"] == "Guards! Guards!", row
    assert row["author"] == {"name": "Terry Pratchett"}, row
    assert sorted(g["name"] for g in row["genres"]) == ["comedy", "fantasy"], row

    r = db.from_("books").select("id", count="exact").lt("pages", 200).order("id").execute()
    assert [b["id"] for b in r.data] == [1, 5], r.data
    assert r.count == 2, r.count

    r = db.from_("authors").select("name").eq("id", 1).single().execute()
    assert r.data == {"name": "Ursula K. Le Guin"}, r.data

    r = db.from_("genres").insert({"id": 50, "name": "poetry"}).execute()
    assert r.data == [{"id": 50, "name": "poetry"}], r.data
    r = db.from_("genres").upsert({"id": 50, "name": "epic poetry"}).execute()
    assert r.data == [{"id": 50, "name": "epic poetry"}], r.data
    r = db.from_("genres").update({"name": "verse"}).eq("id", 50).execute()
    assert r.data == [{"id": 50, "name": "verse"}], r.data
    r = db.from_("genres").delete().eq("id", 50).execute()
    assert r.data == [{"id": 50, "name": "verse"}], r.data

    try:
        db.from_("genres").insert({"id": 1, "name": "dup"}).execute()
        raise SystemExit("expected a unique violation")
    except APIError as e:
        assert e.code == "23505", e

    r = db.rpc("add_them", {"a": 20, "b": 22}).execute()
    assert r.data == 42, r.data
    r = db.rpc("books_by", {"author": 2}).select("title").order("id").execute()
    assert [b["title"] for b in r.data] == ["Guards! Guards!", "Good Omens"], r.data
    r = (
        db.rpc("titles_table", {}, count="exact")
        .select("title")
        .gt("pages", 200)
        .order("title")
        .limit(2)
        .execute()
    )
    assert r.data == [{"title": "Good Omens"}, {"title": "Guards! Guards!"}], r.data
    assert r.count == 3, r.count
    r = db.rpc("stats", {}).execute()
    assert r.data == {"books": 5, "pages": 1262}, r.data

print("postgrest-py ok")
