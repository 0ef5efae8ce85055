"""One round trip for what every append needs first: the chain's lock, then the last event."""

from django.db import migrations

# 0x6175646974 is "audit" in ASCII: the advisory lock key of the chain (audit/chain.py).
FUNCTION = """
CREATE OR REPLACE FUNCTION audit_lock_and_last_event(OUT last_seq BIGINT, OUT last_hash VARCHAR)
AS $$
BEGIN
    PERFORM pg_advisory_xact_lock(418581342580);
    SELECT e.seq, e.hash INTO last_seq, last_hash
      FROM audit_auditevent e ORDER BY e.seq DESC LIMIT 1;
END;
$$ LANGUAGE plpgsql;
"""


class Migration(migrations.Migration):
    dependencies = [("audit", "0002_chain_genesis")]

    operations = [
        migrations.RunSQL(FUNCTION, "DROP FUNCTION IF EXISTS audit_lock_and_last_event();"),
    ]
