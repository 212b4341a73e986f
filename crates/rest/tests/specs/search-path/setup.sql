-- The extra search path (PostgREST's db-extra-search-path): extension types and operators, and
-- functions, installed in public while the API exposes api.
CREATE EXTENSION citext;
CREATE SCHEMA api;

CREATE TABLE api.users (id int PRIMARY KEY, email citext NOT NULL, name text NOT NULL);
INSERT INTO api.users VALUES (1, 'Ada@Example.com', 'Ada'), (2, 'grace@example.com', 'Grace');

CREATE FUNCTION public.shout(text) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT upper($1) || '!' $$;
-- A computed field of api calling public's function unqualified (resolved when called, through
-- the request's search_path), as PostgREST's ltree nlevel example.
CREATE FUNCTION api.loud_name(api.users) RETURNS text LANGUAGE sql STABLE
  AS $$ SELECT shout($1.name) $$;
-- A computed field defined in public over api's table: found through the search path.
CREATE FUNCTION public.initial(api.users) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT left($1.name, 1) $$;
-- The same name in api and public: api's comes first in the search path.
CREATE FUNCTION api.label(api.users) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'api:' || $1.name $$;
CREATE FUNCTION public.label(api.users) RETURNS text LANGUAGE sql IMMUTABLE
  AS $$ SELECT 'public:' || $1.name $$;

-- What the request's search path resolves to.
CREATE FUNCTION api.schemas() RETURNS text[] LANGUAGE sql STABLE
  AS $$ SELECT pg_catalog.current_schemas(false)::text[] $$;
CREATE FUNCTION public.schemas() RETURNS text[] LANGUAGE sql STABLE
  AS $$ SELECT pg_catalog.current_schemas(false)::text[] $$;
