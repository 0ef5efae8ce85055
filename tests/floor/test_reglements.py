"""Posted règlements: versioned, approved by the commissioner, never edited."""

from __future__ import annotations

import datetime as dt

import pytest
from django.db import DatabaseError, connection, transaction

from casino.errors import RoleRequired
from casino.floor.models import PostedReglement
from casino.floor.services import (
    InvalidReglementPosting,
    reglement_load_presets,
    reglement_post,
    table_create,
)
from casino.games.reglement import PRESETS, reglement

DAY = dt.date(2026, 11, 22)


def test_the_four_presets_are_the_initial_posted_versions(cast):
    posted = reglement_load_presets(actor=cast.commissaire, effective_from=DAY)
    assert sorted(p.name for p in posted) == sorted(PRESETS)
    for p in posted:
        assert p.version == 1
        assert p.approved_by == cast.commissaire
        assert p.engine() == reglement(p.name)
        assert all(a["fr"] and a["en"] for a in p.articles)
    france = PostedReglement.objects.get(name="france-2007")
    assert any("carte rouge" in a["fr"] and "cut" not in a["fr"] for a in france.articles)
    assert reglement_load_presets(actor=cast.commissaire, effective_from=DAY) == []


def test_a_change_is_a_new_version_superseding_the_old(cast):
    (first,) = [
        p
        for p in reglement_load_presets(actor=cast.commissaire, effective_from=DAY)
        if p.name == "baden-1854"
    ]
    second = reglement_post(
        actor=cast.commissaire,
        name="baden-1854",
        spec={"preset": "baden-1854", "overrides": {"max_prison_level": 2}},
        effective_from=DAY + dt.timedelta(days=30),
    )
    assert (second.version, second.supersedes) == (2, first)
    assert second.engine().max_prison_level == 2
    assert first.engine().max_prison_level == 3  # the old version is as it was
    assert any("au-delà de 2 prisons" in a["fr"] for a in second.articles)


@pytest.mark.parametrize(
    "sql",
    ["UPDATE floor_postedreglement SET parameters = '{}'", "DELETE FROM floor_postedreglement"],
)
def test_a_posted_version_is_never_edited(cast, sql):
    reglement_load_presets(actor=cast.commissaire, effective_from=DAY)
    with pytest.raises(DatabaseError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(sql)


@pytest.mark.parametrize("who", ["directeur", "chef", "inspecteur", "root"])
def test_only_the_commissioner_approves_a_posting(cast, who):
    with pytest.raises(RoleRequired):
        reglement_post(
            actor=getattr(cast, who), name="baden-1854", spec="baden-1854", effective_from=DAY
        )


@pytest.mark.parametrize(
    ("spec", "articles", "where"),
    [
        ({"preset": "baden-1854", "overrides": {"burn": 20}}, None, "reglement.overrides.burn"),
        ("monaco", None, "reglement"),
        ("baden-1854", [{"number": "1", "fr": "Texte", "en": ""}], "articles[0]"),
        (
            "baden-1854",
            [{"number": "1", "fr": "a", "en": "b"}, {"number": "1", "fr": "c", "en": "d"}],
            "articles[1]",
        ),
    ],
)
def test_the_engine_validates_what_is_posted(cast, spec, articles, where):
    with pytest.raises(InvalidReglementPosting) as error:
        reglement_post(
            actor=cast.commissaire, name="x", spec=spec, effective_from=DAY, articles=articles
        )
    assert error.value.where == where
    assert not PostedReglement.objects.exists()


def test_table_limits_are_checked_against_the_reglement(cast):
    reglement_load_presets(actor=cast.commissaire, effective_from=DAY)
    france = PostedReglement.objects.get(name="france-2007")
    with pytest.raises(InvalidReglementPosting, match="exceeds max_stake_ratio 1000"):
        table_create(
            actor=cast.directeur,
            number=7,
            game="trente-et-quarante",
            reglement_id=france.pk,
            min_stake=100,
            max_stake=200_000,
        )
    table = table_create(
        actor=cast.directeur,
        number=7,
        game="trente-et-quarante",
        reglement_id=france.pk,
        min_stake=200,
        max_stake=200_000,
    )
    assert (table.rules().min_stake, table.rules().max_stake) == (200, 200_000)
