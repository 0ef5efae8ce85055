"""A card laid in one round trip: the pack locked, its figures read, the card written (and, in a
coup, the coup's cards read back).

Every card of Trente-et-Quarante and Pharao comes through ``shoes.services.card_lay``: it locked
the pack, read the pack's last place and the copies of the card already out in the taille, then
wrote the card, three statements (issue 17, tenth round); a Trente-et-Quarante card then read
the coup's cards, which its engine replays at every card, in a fourth. Here they are one call.

The figures are read by a statement of their own, after the lock: in READ COMMITTED each statement
of a function takes a new snapshot, so it sees a card committed by whoever held the lock before.
Read beside the lock, in the lock's statement, they would be those of the moment that statement
began, before any wait for the lock.

What the pack may hold of the card is given, by kind of pack (``p_copies``): the composition is
the games' (``casino.games.cards``), not the database's. A kind it does not name holds nothing."""

from django.db import migrations

FUNCTION = """
CREATE OR REPLACE FUNCTION shoes_lay_card(
    p_pack BIGINT,
    p_card VARCHAR,
    p_taille BIGINT,
    p_copies JSONB,
    p_at TIMESTAMPTZ,
    p_actor BIGINT,
    p_shift BIGINT,
    p_coup BIGINT,
    OUT pack_state VARCHAR,
    OUT laid_id BIGINT,
    OUT laid_seq INTEGER,
    OUT already_out INTEGER,
    OUT coup_cards VARCHAR[]
) AS $$
DECLARE
    pack_kind VARCHAR;
    last_seq INTEGER;
BEGIN
    SELECT p.state, p.kind INTO pack_state, pack_kind
      FROM shoes_pack p WHERE p.id = p_pack FOR UPDATE;
    IF NOT FOUND OR pack_state <> 'in_play' THEN
        RETURN;  -- nothing laid: the caller says why
    END IF;
    SELECT max(c.seq), count(*) FILTER (WHERE c.card = p_card AND c.taille = p_taille)
      INTO last_seq, already_out
      FROM shoes_cardlaid c WHERE c.pack_id = p_pack;
    IF already_out + 1 > COALESCE((p_copies ->> pack_kind)::INTEGER, 0) THEN
        RETURN;  -- a foreign card: nothing laid, the caller records the refusal
    END IF;
    laid_seq := COALESCE(last_seq, 0) + 1;
    INSERT INTO shoes_cardlaid (pack_id, seq, taille, card, burned, at, actor_id, shift_id, coup_id)
    VALUES (p_pack, laid_seq, p_taille, p_card, false, p_at, p_actor, p_shift, p_coup)
    RETURNING id INTO laid_id;
    IF p_coup IS NOT NULL THEN  -- the coup's cards in their order, this one last
        SELECT array_agg(c.card ORDER BY c.seq) INTO coup_cards
          FROM shoes_cardlaid c WHERE c.coup_id = p_coup;
    END IF;
END;
$$ LANGUAGE plpgsql;
"""

SIGNATURE = "shoes_lay_card(BIGINT, VARCHAR, BIGINT, JSONB, TIMESTAMPTZ, BIGINT, BIGINT, BIGINT)"


class Migration(migrations.Migration):
    dependencies = [("shoes", "0005_french_labels")]

    operations = [migrations.RunSQL(FUNCTION, f"DROP FUNCTION IF EXISTS {SIGNATURE};")]
