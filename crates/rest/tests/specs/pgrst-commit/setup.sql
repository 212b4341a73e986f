-- Cases ported from PostgREST's SingularSpec whose writes commit (tx=commit there): a write
-- refused for the single-object media type must keep nothing.
CREATE TABLE addresses (id int NOT NULL UNIQUE, address text NOT NULL);
INSERT INTO addresses VALUES (1, 'address 1'), (2, 'address 2'), (3, 'address 3'), (4, 'address 4');
