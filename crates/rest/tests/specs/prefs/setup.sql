-- Tables and functions for Preference-Applied: which preferences each kind of request lists.
CREATE TABLE items (id int PRIMARY KEY, name text DEFAULT 'unnamed');
INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE TABLE no_pk (a text, b text);
INSERT INTO no_pk VALUES ('1', '0'), ('2', '0');
CREATE TABLE stamps (t timestamptz);
INSERT INTO stamps VALUES ('2023-10-18 12:37:59.611+00');
CREATE FUNCTION add_them(a int, b int) RETURNS int LANGUAGE sql IMMUTABLE AS 'SELECT a + b';
CREATE FUNCTION echo_json(payload json) RETURNS json LANGUAGE sql AS 'SELECT payload';
CREATE FUNCTION do_nothing() RETURNS void LANGUAGE sql AS 'SELECT';
CREATE FUNCTION add_item(new_id int) RETURNS SETOF items LANGUAGE sql
  AS 'INSERT INTO items (id) VALUES (new_id) RETURNING *';
