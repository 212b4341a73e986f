\i ../fixtures.sql
