"""What one SQL statement does to which tables, read from its text (connectome/statements.py):
the shapes the ORM writes on SQLite and PostgreSQL, and what is left as raw SQL."""

from __future__ import annotations

import pytest

from beammcp_django.connectome.core.statements import DELETE, READ, UNKNOWN, WRITE, classify


@pytest.mark.parametrize(
    ("sql", "touches"),
    [
        ('SELECT "t"."id" FROM "t" WHERE "t"."a" = %s LIMIT 21', ((READ, "t"),)),
        ('SELECT COUNT(*) AS "__count" FROM "t" INNER JOIN "u" ON ("t"."u_id" = "u"."id")',
         ((READ, "t"), (READ, "u"))),
        ('INSERT INTO "t" ("a") VALUES (%s) RETURNING "t"."id"', ((WRITE, "t"),)),
        ('UPDATE "t" SET "a" = %s WHERE "t"."id" IN (SELECT U0."id" FROM "u" U0)',
         ((WRITE, "t"), (READ, "u"))),
        ('DELETE FROM "t" WHERE "t"."id" IN (%s, %s)', ((DELETE, "t"),)),
        ("DELETE FROM `t` WHERE `t`.`id` = 1", ((DELETE, "t"),)),
        ('SELECT 1 FROM "public"."t"', ((READ, "t"),)),
        ('SELECT EXTRACT(YEAR FROM "t"."at") FROM "t" FOR UPDATE', ((READ, "t"),)),
        ("INSERT INTO a SELECT * FROM b ON CONFLICT DO UPDATE SET x = 1",
         ((WRITE, "a"), (READ, "b"))),
        ('WITH q AS (SELECT 1 FROM "t") SELECT * FROM q', ((READ, "t"), (READ, "q"))),
        ('  (SELECT 1 FROM "a") UNION (SELECT 2 FROM "b")', ((READ, "a"), (READ, "b"))),
        ('SELECT 1 FROM "we""ird"', ((READ, 'we"ird'),)),
    ],
)  # fmt: skip
def test_reads_writes_and_deletes_per_table(sql, touches):
    assert classify(sql) == touches


@pytest.mark.parametrize(
    "sql", ['SAVEPOINT "s1"', 'RELEASE SAVEPOINT "s1"', "ROLLBACK", "BEGIN", "COMMIT", "SET x=1"]
)
def test_transaction_control_touches_nothing(sql):
    assert classify(sql) == ()


@pytest.mark.parametrize(
    "sql", ["PRAGMA foreign_keys", "CREATE TABLE x (a int)", "CALL proc()", "", "INSERT 1"]
)
def test_anything_else_is_raw_sql_of_unknown_tables(sql):
    assert classify(sql) == ((UNKNOWN, None),)
