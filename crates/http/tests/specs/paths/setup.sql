CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL);
INSERT INTO items VALUES (1, 'one'), (2, 'two'), (3, 'three');
