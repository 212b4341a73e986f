\i ../search-path/setup.sql
