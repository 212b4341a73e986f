CREATE TABLE items (id integer PRIMARY KEY, owner text NOT NULL, name text NOT NULL);
INSERT INTO items VALUES (1, 'ann', 'lamp'), (2, 'bob', 'desk');
