\i ../fixtures.sql
-- Every column has a default: an empty object is a whole row.
CREATE TABLE notes (id serial PRIMARY KEY, body text DEFAULT 'blank', day date DEFAULT '2000-01-01');
GRANT SELECT, INSERT, UPDATE, DELETE ON notes TO rest_anon;
GRANT USAGE ON SEQUENCE notes_id_seq TO rest_anon;
