-- Cases ported from PostgREST's SingularSpec whose writes commit (tx=commit there): a write
-- refused for the single-object media type must keep nothing.
CREATE TABLE addresses (id int NOT NULL UNIQUE, address text NOT NULL);
INSERT INTO addresses VALUES (1, 'address 1'), (2, 'address 2'), (3, 'address 3'), (4, 'address 4');

-- A function that changes rows and returns them (PostgREST's setprojects, on addresses).
CREATE FUNCTION set_addresses(id_l int, id_h int, name text) RETURNS SETOF addresses
LANGUAGE sql AS $$
  UPDATE addresses SET address = name WHERE id >= id_l AND id <= id_h RETURNING *;
$$;
-- One that changes rows and returns one value.
CREATE FUNCTION rename_addresses(id_l int, id_h int, name text) RETURNS int
LANGUAGE sql AS $$
  WITH changed AS (UPDATE addresses SET address = name WHERE id >= id_l AND id <= id_h RETURNING 1)
  SELECT count(*)::int FROM changed;
$$;

-- A foreign key checked at commit: a write breaking it succeeds as a statement and fails when
-- its transaction commits, which must be its answer (PostgreSQL's 23503, 409).
CREATE TABLE owners (id int PRIMARY KEY);
INSERT INTO owners VALUES (1);
CREATE TABLE pets (id int PRIMARY KEY,
  owner int REFERENCES owners DEFERRABLE INITIALLY DEFERRED);
CREATE FUNCTION adopt(pet int, by_owner int) RETURNS SETOF pets LANGUAGE sql AS $$
  INSERT INTO pets VALUES (pet, by_owner) RETURNING *;
$$;
