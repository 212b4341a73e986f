CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three');
CREATE INDEX items_name ON items (name);
CREATE TABLE bookings (during int4range, EXCLUDE USING gist (during WITH &&));
CREATE TABLE secrets (id integer PRIMARY KEY, secret text);
INSERT INTO secrets VALUES (1, 'hidden');
DO $$ BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'spec_limited') THEN
        CREATE ROLE spec_limited NOLOGIN;
    END IF;
END $$;
GRANT SELECT ON items TO spec_limited;
GRANT DELETE ON items TO spec_limited;
