\i ../fixtures.sql
CREATE TABLE secrets (id int PRIMARY KEY, value text);
INSERT INTO secrets VALUES (1, 'hidden');
REVOKE ALL ON secrets FROM rest_anon;

-- PostgREST's access mode: GET and HEAD, and calls of functions that are not VOLATILE, run in
-- read-only transactions (its callcounter example).
CREATE SEQUENCE callcounter_count START 1;
CREATE VIEW callcounter AS SELECT pg_catalog.nextval('callcounter_count');
CREATE FUNCTION next_count() RETURNS bigint LANGUAGE sql VOLATILE
  AS $$ SELECT pg_catalog.nextval('callcounter_count') $$;
-- Declared STABLE, yet it writes: the read-only transaction stops it.
CREATE FUNCTION next_count_stable() RETURNS bigint LANGUAGE sql STABLE
  AS $$ SELECT pg_catalog.nextval('callcounter_count') $$;
GRANT USAGE, SELECT ON SEQUENCE callcounter_count TO rest_anon;
GRANT SELECT ON callcounter TO rest_anon;
