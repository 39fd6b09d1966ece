#!/bin/sh
# Run once by the postgres image on an empty data folder: Dipper's role and
# database (events, long texts, inbox wakes) beside Temporal's.
set -eu
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres <<SQL
CREATE ROLE dipper LOGIN PASSWORD '${DIPPER_DB_PASSWORD:-dipper}';
CREATE DATABASE dipper OWNER dipper;
SQL
