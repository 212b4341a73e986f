\i ../../../../../../examples/films/schema.sql
