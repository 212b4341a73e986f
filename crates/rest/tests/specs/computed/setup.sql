-- Computed fields: functions of one row of a table (or view) used as its columns.
CREATE SCHEMA api;
CREATE SCHEMA private;
SET search_path = api;

CREATE TABLE teams (id int PRIMARY KEY, name text NOT NULL);
CREATE TABLE people (
  id int PRIMARY KEY,
  first_name text NOT NULL,
  last_name text NOT NULL,
  team_id int REFERENCES teams (id)
);
CREATE VIEW people_view AS SELECT id, first_name, last_name FROM people;

INSERT INTO teams VALUES (1, 'Engines'), (2, 'Compilers');
INSERT INTO people VALUES
  (1, 'Ada', 'Lovelace', 1),
  (2, 'Charles', 'Babbage', 1),
  (3, 'Grace', 'Hopper (RADM), USN', 2),
  (4, 'Alan', 'Turing', NULL);

-- Computed fields of people.
CREATE FUNCTION full_name(people) RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT $1.first_name || ' ' || $1.last_name $$;
CREATE FUNCTION name_length(p people, extra int DEFAULT 0) RETURNS int LANGUAGE sql IMMUTABLE
  AS $$ SELECT length(p.first_name || p.last_name) + extra $$;
-- A name that must be quoted in SQL.
CREATE FUNCTION "Nick-Name"(people) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT lower($1.first_name) || '!' $$;
-- A column's name: the column wins, as in PostgreSQL's attribute notation.
CREATE FUNCTION first_name(people) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'shadowed' $$;
-- Overloaded on two row types: each table sees its own.
CREATE FUNCTION label(people) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'person ' || $1.id $$;
CREATE FUNCTION label(teams) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'team ' || $1.name $$;
-- Over a view's row type.
CREATE FUNCTION initials(people_view) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT left($1.first_name, 1) || left($1.last_name, 1) $$;

-- Not computed fields of people.
CREATE FUNCTION shout(text) RETURNS text LANGUAGE sql IMMUTABLE AS $$ SELECT upper($1) $$;
CREATE FUNCTION greeting(people, text) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT $2 || ' ' || $1.first_name $$;
CREATE FUNCTION private.secret(api.people) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'secret' $$;
CREATE FUNCTION public.leaked(api.people) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'leaked' $$;

-- A function whose rows are people, for computed fields on a call's result.
CREATE FUNCTION all_people() RETURNS SETOF people LANGUAGE sql STABLE
  AS $$ SELECT * FROM people $$;

RESET search_path;
