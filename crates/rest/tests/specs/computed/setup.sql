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

-- Computed relationships: functions from a row to rows of a relation.
CREATE TABLE projects (id int PRIMARY KEY, name text NOT NULL, lead_id int REFERENCES people (id));
INSERT INTO projects VALUES
  (1, 'Analytical Engine', 2), (2, 'Notes', 1), (3, 'COBOL', 3), (4, 'Bombe', 4),
  (5, 'Difference Engine', 2);
-- To one: SETOF with ROWS 1, or a single row.
CREATE FUNCTION lead(projects) RETURNS SETOF people ROWS 1 LANGUAGE sql STABLE
  AS $$ SELECT * FROM people WHERE id = $1.lead_id $$;
CREATE FUNCTION lead_noset(projects) RETURNS people LANGUAGE sql STABLE
  AS $$ SELECT * FROM people WHERE id = $1.lead_id $$;
-- To many.
CREATE FUNCTION led(people) RETURNS SETOF projects LANGUAGE sql STABLE
  AS $$ SELECT * FROM projects WHERE lead_id = $1.id $$;
-- Named as the relation: it replaces the foreign key's relationship (project 2 has none here).
CREATE FUNCTION people(projects) RETURNS SETOF people ROWS 1 LANGUAGE sql STABLE
  AS $$ SELECT * FROM people WHERE id = $1.lead_id AND $1.id <> 2 $$;
-- Self.
CREATE FUNCTION predecessor(people) RETURNS SETOF people ROWS 1 LANGUAGE sql STABLE
  AS $$ SELECT * FROM people WHERE id = $1.id - 1 $$;
-- Two parameters: no relationship.
CREATE FUNCTION led_since(people, int) RETURNS SETOF projects LANGUAGE sql STABLE
  AS $$ SELECT * FROM projects WHERE lead_id = $1.id AND id >= $2 $$;

RESET search_path;
