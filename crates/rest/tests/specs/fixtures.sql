-- The REST API's test schema: a small library with every kind of relationship, views,
-- functions of each kind, and the types PostgREST clients see. Suites include it with
-- `\i ../fixtures.sql` in their setup.sql.

-- Roles are cluster-wide: suites share them.
DO $$ BEGIN CREATE ROLE rest_anon NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;
DO $$ BEGIN CREATE ROLE rest_reader NOLOGIN; EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL; END $$;

CREATE TABLE authors (
  id int PRIMARY KEY,
  name text NOT NULL,
  born date,
  mentor_id int REFERENCES authors (id)          -- self reference
);
COMMENT ON TABLE authors IS 'People who write books';
COMMENT ON COLUMN authors.name IS 'Full name';

CREATE TABLE profiles (                           -- one-to-one with authors
  author_id int PRIMARY KEY REFERENCES authors (id),
  bio text
);

CREATE TABLE books (
  id serial PRIMARY KEY,
  title text NOT NULL,
  author_id int NOT NULL REFERENCES authors (id),
  editor_id int REFERENCES authors (id),           -- a second key to authors: ambiguity
  published date,
  pages int CHECK (pages > 0),
  price numeric(8, 2),
  in_print boolean DEFAULT true,
  data jsonb,
  tags text[]
);

CREATE TABLE reviews (
  id serial PRIMARY KEY,
  book_id int NOT NULL REFERENCES books (id) ON DELETE CASCADE,
  stars int NOT NULL CHECK (stars BETWEEN 1 AND 5),
  body text
);

CREATE TABLE genres (
  id int PRIMARY KEY,
  name text UNIQUE NOT NULL
);

CREATE TABLE book_genres (                        -- junction: books <-> genres
  book_id int REFERENCES books (id) ON DELETE CASCADE,
  genre_id int REFERENCES genres (id),
  PRIMARY KEY (book_id, genre_id)
);

CREATE VIEW books_in_print AS
  SELECT id, title, author_id, pages FROM books WHERE in_print;

CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
CREATE DOMAIN positive AS int CHECK (VALUE > 0);
CREATE TYPE pair AS (label text, score int);

CREATE TABLE kinds (
  id int PRIMARY KEY,
  i2 smallint, i8 bigint, f4 real, f8 double precision, num numeric,
  flag boolean, t text, vc varchar(10), c char(3),
  j json, jb jsonb,
  ints int[], grid int[][], words text[],
  ts timestamp, tstz timestamptz, d date, tm time, iv interval,
  u uuid, b bytea, m mood, p positive, pr pair, r int4range
);

INSERT INTO authors VALUES
  (1, 'Ursula K. Le Guin', '1929-10-21', NULL),
  (2, 'Terry Pratchett', '1948-04-28', 1),
  (3, 'Neil Gaiman', '1960-11-10', 2),
  (4, 'Anonymous', NULL, NULL);
INSERT INTO profiles VALUES (1, 'Earthsea'), (2, 'Discworld');
INSERT INTO books (title, author_id, editor_id, published, pages, price, in_print, data, tags) VALUES
  ('A Wizard of Earthsea', 1, 3, '1968-01-01', 183, 9.99, true, '{"series": "Earthsea", "n": 1}', '{fantasy,classic}'),
  ('The Dispossessed', 1, NULL, '1974-05-01', 341, 12.50, true, '{"award": "Hugo"}', '{sf}'),
  ('Guards! Guards!', 2, 1, '1989-11-01', 288, 8.99, true, '{"series": "Discworld", "n": 8}', '{fantasy,comic}'),
  ('Good Omens', 2, 3, '1990-05-01', 288, 10.00, false, NULL, '{comic}'),
  ('Coraline', 3, NULL, '2002-08-04', 162, NULL, true, '{}', '{}');
INSERT INTO reviews (book_id, stars, body) VALUES
  (1, 5, 'A classic'), (1, 4, 'Lovely'), (3, 5, 'Funny'), (5, 3, NULL);
INSERT INTO genres VALUES (1, 'fantasy'), (2, 'science fiction'), (3, 'comedy');
INSERT INTO book_genres VALUES (1, 1), (2, 2), (3, 1), (3, 3), (4, 3);
INSERT INTO kinds VALUES (1, 2, 8000000000, 1.5, 2.25, 10.50, true, 'text', 'vc', 'abc',
  '{"a": [1, 2]}', '{"b": null}', '{1,2,NULL}', '{{1,2},{3,4}}', '{"a b",c}',
  '2020-01-02 03:04:05', '2020-01-02 03:04:05.5+00', '2020-01-02', '03:04:05', '1 day 02:00:00',
  'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\x0102', 'happy', 7, ROW('x', 3), '[1,5)');
INSERT INTO kinds (id) VALUES (2);

-- Functions of each kind.
CREATE FUNCTION add_them(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
CREATE FUNCTION greet(name text DEFAULT 'guest') RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT 'Hello ' || name || '!' $$;
CREATE FUNCTION books_by(author int) RETURNS SETOF books LANGUAGE sql STABLE
  AS 'SELECT * FROM books WHERE author_id = author ORDER BY id';
CREATE FUNCTION first_book() RETURNS books LANGUAGE sql STABLE
  AS 'SELECT * FROM books ORDER BY id LIMIT 1';
CREATE FUNCTION page_counts() RETURNS SETOF int LANGUAGE sql STABLE
  AS 'SELECT pages FROM books ORDER BY id';
CREATE FUNCTION stats(OUT books bigint, OUT pages bigint) LANGUAGE sql STABLE
  AS 'SELECT count(*), sum(pages) FROM books';
CREATE FUNCTION titles_table() RETURNS TABLE (title text, pages int) LANGUAGE sql STABLE
  AS 'SELECT title, pages FROM books ORDER BY id';
CREATE FUNCTION add_genre(name text) RETURNS int LANGUAGE sql VOLATILE
  AS 'INSERT INTO genres (id, name) VALUES ((SELECT coalesce(max(id), 0) + 1 FROM genres), name) RETURNING id';
CREATE FUNCTION echo_json(json) RETURNS json LANGUAGE sql IMMUTABLE AS 'SELECT $1';
CREATE FUNCTION count_words(VARIADIC words text[]) RETURNS int LANGUAGE sql IMMUTABLE
  AS 'SELECT coalesce(array_length(words, 1), 0)';
CREATE FUNCTION fail_politely(message text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
  RAISE EXCEPTION '%', message USING HINT = 'ask nicely';
END $$;
CREATE FUNCTION overloaded(a int) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'int' $$;
CREATE FUNCTION overloaded(a int, b int) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT 'two' $$;
CREATE FUNCTION whoami() RETURNS json LANGUAGE sql STABLE AS $$
  SELECT json_build_object('role', current_user,
                           'method', current_setting('request.method', true),
                           'path', current_setting('request.path', true),
                           'agent', current_setting('request.headers', true)::json->>'user-agent')
$$;

GRANT USAGE ON SCHEMA public TO rest_anon, rest_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO rest_anon, rest_reader;
GRANT INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO rest_anon;
GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO rest_anon;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA public TO rest_anon, rest_reader;
