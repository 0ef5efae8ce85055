"""Words (README, "Words"; STYLE.md 12): every refusal is written in French in the code through
the translation machinery, English is in ``locale/en/LC_MESSAGES/django.po``, and a request is
answered in the language it asks for, our words and the framework's alike."""

from __future__ import annotations

import ast
import gettext
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.test import Client
from django.utils import translation
from rest_framework import exceptions, serializers
from rest_framework.test import APIClient

from casino.errors import DomainError
from casino.floor.services import InvalidReglementPosting, reglement_post
from casino.games.cards import Rank
from casino.games.errors import GameError, StakeRefused
from casino.games.reglement import reglement
from casino.i18n import either, game_message
from tests.actors import PASSWORD
from tests.conftest import REQUIRE_SERVICES, ROOT

PO = ROOT / "locale" / "en" / "LC_MESSAGES" / "django.po"
MO = PO.with_suffix(".mo")


# --- the catalog ------------------------------------------------------------------------------


@dataclass
class Entry:
    msgid: str = ""
    msgstr: str = ""
    msgctxt: str = ""  # a word with two senses ("retirer" a pack, "retirer" a stake)
    fuzzy: bool = False
    plural: bool = False


def read_po(path: Path) -> list[Entry]:
    """The entries of a PO file (obsolete ones left out), header included (``msgid ""``)."""
    entries: list[Entry] = []
    entry, field = Entry(), ""
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("#~"):
            continue
        starts = line.startswith(("#", "msgctxt ", "msgid "))
        if starts and field.startswith("msgstr"):  # the previous entry is complete
            entries.append(entry)
            entry, field = Entry(), ""
        if line.startswith("#,"):
            entry.fuzzy = entry.fuzzy or "fuzzy" in line
        elif line.startswith(("msgid ", "msgid_plural ", "msgstr", "msgctxt ")):
            field, _, text = line.partition(" ")
            entry.plural = entry.plural or (field != "msgid" and field.startswith("msgid"))
            _append(entry, field, text)
        elif line.startswith('"'):
            _append(entry, field, line)
    if field.startswith("msgstr"):
        entries.append(entry)
    return entries


def _append(entry: Entry, field: str, quoted: str) -> None:
    text = ast.literal_eval(quoted)  # PO strings escape as Python's do (\" \\ \n)
    if field == "msgid":
        entry.msgid += text
    elif field == "msgstr":
        entry.msgstr += text
    elif field == "msgctxt":
        entry.msgctxt += text


def messages(entries: list[Entry]) -> dict[str, str]:
    """By key as gettext keeps them: ``context\x04msgid`` for a message with a context."""
    return {
        (f"{e.msgctxt}\x04{e.msgid}" if e.msgctxt else e.msgid): e.msgstr
        for e in entries
        if e.msgid
    }


def placeholders(text: str) -> Counter[str]:
    return Counter(re.findall(r"%\((\w+)\)[sdr]", text))


def test_the_committed_mo_is_the_po_compiled():
    """A fresh clone needs no GNU gettext: the .mo is committed, and is exactly the .po."""
    with MO.open("rb") as compiled:
        catalog = gettext.GNUTranslations(compiled)
    # The parsed catalog, header ("") aside: GNUTranslations keeps it in ``_catalog``.
    assert {k: v for k, v in catalog._catalog.items() if k} == messages(read_po(PO))
    assert catalog.info()["content-type"] == "text/plain; charset=UTF-8"


def test_every_message_has_its_english():
    entries = [e for e in read_po(PO) if e.msgid]
    assert len(entries) > 250
    for e in entries:
        assert e.msgstr.strip(), f"no English for {e.msgid!r}"
        assert not e.fuzzy, f"fuzzy English for {e.msgid!r}"
        assert not e.plural, f"a plural form: {e.msgid!r} (write the message without one)"
        assert placeholders(e.msgstr) == placeholders(e.msgid), e.msgid


def test_makemessages_finds_no_message_missing_from_the_catalog(tmp_path):
    """``make messages`` on a copy of the sources extracts exactly the catalog's messages: none
    written in the code and left untranslated, none in the catalog that the code dropped."""
    if shutil.which("xgettext") is None:
        message = "xgettext (Debian's gettext) is not installed"
        if REQUIRE_SERVICES:
            pytest.fail(message)
        pytest.skip(message)
    copy = tmp_path / "src"
    shutil.copytree(
        ROOT,
        copy,
        ignore=shutil.ignore_patterns(
            ".git", ".venv", "var", "locale", "__pycache__", "*_cache", ".hypothesis"
        ),
    )
    (copy / "locale").mkdir()
    makefile = (ROOT / "Makefile").read_text()
    args = shlex.split(re.search(r"^MAKEMESSAGES_ARGS := (.*)$", makefile, re.M)[1])
    env = {k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"}
    done = subprocess.run(
        [str(Path(sys.executable).parent / "django-admin"), "makemessages", *args],
        cwd=copy,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    extracted = set(messages(read_po(copy / "locale/en/LC_MESSAGES/django.po")))
    committed = set(messages(read_po(PO)))
    assert sorted(extracted - committed) == [], "not in locale/en: run `make messages`"
    assert sorted(committed - extracted) == [], "no longer in the code: run `make messages`"


# --- what is written in the code ----------------------------------------------------------------

# The API edge (casino/api/, each app's api.py) is rewritten with the resources of issue 19, in
# this same convention; it joins this check then.
EDGE: tuple[str, ...] = ()
_ENGINE_ERRORS = ROOT / "casino" / "games" / "errors.py"
ENGINE_WORDS = (
    "casino/games/cards.py",
    "casino/games/reglement.py",
    "casino/games/trente_et_quarante.py",
    "casino/games/pharao.py",
)


def _subclasses(root: str, trees: list[ast.Module]) -> set[str]:
    """The names of ``root`` and of the classes defined in ``trees`` that derive from it."""
    bases = {
        node.name: {getattr(b, "id", getattr(b, "attr", "")) for b in node.bases}
        for tree in trees
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
    }
    found = {root}
    while True:
        more = {name for name, of in bases.items() if of & found} - found
        if not more:
            return found
        found |= more


def _is_words(node: ast.expr) -> bool:
    """A message written as it stands: a literal, an f-string, or text joined to one."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return True
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and (_is_words(node.left) or _is_words(node.right))


def _sources() -> list[tuple[str, ast.Module]]:
    sources = []
    for package in ("casino", "audit", "shoes"):
        for path in sorted((ROOT / package).rglob("*.py")):
            name = path.relative_to(ROOT).as_posix()
            if "/migrations/" not in name and not any(part in name for part in EDGE):
                sources.append((name, ast.parse(path.read_text(encoding="utf-8"))))
    return sources


def test_refusals_are_written_through_the_translation_machinery():
    """No refusal (a DomainError) and no act named in one (``act=``) is written as plain text:
    its words are ``_("...")`` (gettext), French, with named placeholders."""
    sources = _sources()
    refusals = _subclasses("DomainError", [tree for _, tree in sources])
    plain = []
    for name, tree in sources:
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            called = getattr(node.func, "id", getattr(node.func, "attr", ""))
            if called in refusals and node.args and _is_words(node.args[0]):
                plain.append(f"{name}:{node.lineno} {called}(...)")
            plain += [
                f"{name}:{node.lineno} act=..."
                for keyword in node.keywords
                if keyword.arg == "act" and _is_words(keyword.value)
            ]
    assert plain == []


def test_every_message_is_given_its_placeholders():
    """``_("...") % {...}`` and an engine's ``Error(gettext_noop("..."), **params)`` name the
    same placeholders: a missing one would turn a refusal into a KeyError (a 500)."""
    wrong = []
    trees = [*_sources(), *((n, ast.parse((ROOT / n).read_text("utf-8"))) for n in ENGINE_WORDS)]
    for name, tree in trees:
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.BinOp)
                and isinstance(node.op, ast.Mod)
                and isinstance(node.left, ast.Call)
                and getattr(node.left.func, "id", "") == "_"
                and isinstance(node.right, ast.Dict)
            ):
                template = node.left.args[0].value
                given = Counter(k.value for k in node.right.keys)
            elif isinstance(node, ast.Call) and node.args:
                marked = node.args[1 if getattr(node.func, "id", "") == "_fail" else 0]
                if not (
                    isinstance(marked, ast.Call)
                    and getattr(marked.func, "id", "") == "gettext_noop"
                ):
                    continue
                template = marked.args[0].value
                given = Counter(k.arg for k in node.keywords if k.arg != "where")
                if getattr(node.func, "id", "") == "_fail":
                    given["name"] += 1
            else:
                continue
            if set(placeholders(template)) != set(given):
                wrong.append(f"{name}:{node.lineno} {template!r}")
    assert wrong == []


def test_the_engines_refusals_are_templates_marked_for_the_catalog():
    """The engines import no Django: their refusals carry a template marked with
    ``gettext_noop`` (extracted into the catalog) and its parameters, never finished text. The
    replay's own input errors stay English (REPLAY.md's command line), so replay.py and odds.py
    are not held to it."""
    trees = {name: ast.parse((ROOT / name).read_text(encoding="utf-8")) for name in ENGINE_WORDS}
    errors = _subclasses("GameError", [*trees.values(), ast.parse(_ENGINE_ERRORS.read_text())])
    plain = []
    for name, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                called = getattr(node.func, "id", "")
                words = node.args[:1] if called in errors else node.args[1:2]
                if (called in errors or called == "_fail") and any(map(_is_words, words)):
                    plain.append(f"{name}:{node.lineno} {called}(...)")
    assert plain == []


# --- in code: a service, the engine ----------------------------------------------------------


def test_an_engine_refusal_is_english_in_the_engine_and_translated_by_the_floor():
    with pytest.raises(GameError) as refused:
        reglement("monaco")
    error = refused.value
    assert error.template == "préréglage inconnu %(preset)r (parmi %(presets)s)"
    with translation.override("fr"):
        assert str(error).startswith("unknown preset 'monaco' (one of baden-1854")  # the replay's
        assert game_message(error).startswith("préréglage inconnu 'monaco' (parmi baden-1854")
    with translation.override("en"):
        assert game_message(error).startswith("unknown preset 'monaco' (one of baden-1854")


def test_a_template_is_filled_after_it_is_translated():
    error = StakeRefused(
        "mise %(stake)s : %(amount)s dépasse le maximum de la table %(maximum)s",
        stake="a",
        amount=700,
        maximum=600,
    )
    assert error.message == "stake a: 700 is above the table maximum 600"
    assert (
        error.render(lambda template: template) == "mise a : 700 dépasse le maximum de la table 600"
    )


def test_either_joins_in_the_active_language():
    with translation.override("fr"):
        assert either(["tailleur", "croupier", "chef_de_partie"]) == (
            "tailleur, croupier ou chef_de_partie"
        )
    with translation.override("en"):
        assert either(["tailleur", "croupier"]) == "tailleur or croupier"
    assert either(["tailleur"]) == "tailleur"


@pytest.mark.parametrize(
    ("language", "says"),
    [
        (
            "fr",
            "approuver l'affichage d'un règlement : il faut le rôle commissaire ; chef ne l'a pas",
        ),
        ("en", "approving the posting of a règlement requires the role commissaire; chef does not"),
    ],
)
def test_a_service_refuses_in_the_active_language(cast, language, says):
    with translation.override(language), pytest.raises(DomainError) as refused:
        reglement_post(actor=cast.chef, name="x", spec="baden-1854", effective_from=None)
    assert refused.value.message.startswith(says)


def test_the_floor_shows_an_engine_refusal_in_the_active_language(cast):
    with translation.override("fr"), pytest.raises(InvalidReglementPosting) as refused:
        reglement_post(actor=cast.commissaire, name="x", spec="monaco", effective_from=None)
    assert refused.value.message.startswith("préréglage inconnu 'monaco'")
    with translation.override("en"), pytest.raises(InvalidReglementPosting) as refused:
        reglement_post(actor=cast.commissaire, name="x", spec="monaco", effective_from=None)
    assert refused.value.message.startswith("unknown preset 'monaco'")


def test_without_a_request_the_house_speaks_french(cast):
    """A worker or a command activates no language: LANGUAGE_CODE, French."""
    translation.deactivate()  # the tests' own English (conftest) set aside for this one
    try:
        with pytest.raises(DomainError) as refused:
            reglement_post(actor=cast.chef, name="x", spec="baden-1854", effective_from=None)
    finally:
        translation.activate("en")
    assert "il faut le rôle commissaire" in refused.value.message


# --- over HTTP: the client's Accept-Language ----------------------------------------------------

FRENCH, ENGLISH = "fr", "en"
ASKED = [
    ("fr", FRENCH),
    ("en", ENGLISH),
    (None, FRENCH),
    ("de", FRENCH),
    ("en-GB,en;q=0.8", ENGLISH),
]


def _headers(asked: str | None) -> dict[str, str]:
    return {} if asked is None else {"HTTP_ACCEPT_LANGUAGE": asked}


def _drf(language: str, text: object) -> str:
    """The framework's own words in ``language`` (as its catalog has them)."""
    with translation.override(language):
        return str(text)


@pytest.mark.parametrize(("asked", "language"), ASKED)
def test_the_api_answers_in_the_language_asked_for(cast, asked, language):
    client = APIClient()
    ours = client.post(
        "/api/v1/token", {"username": "chef", "password": "wrong"}, format="json", **_headers(asked)
    )
    assert ours.status_code == 401
    assert ours.json()["message"].startswith(
        "le nom d'utilisateur, le mot de passe ou le code TOTP est faux"
        if language == FRENCH
        else "the username, password or TOTP code is wrong"
    )
    assert ours["Content-Language"] == language
    assert "Accept-Language" in ours["Vary"]

    missing = client.post("/api/v1/token", {"username": "chef"}, format="json", **_headers(asked))
    assert missing.json()["where"] == "password"
    assert missing.json()["message"] == _drf(
        language, serializers.Field.default_error_messages["required"]
    )

    anonymous = client.get("/api/v1/me", **_headers(asked))
    assert anonymous.status_code == 401
    assert anonymous.json()["message"] == _drf(language, exceptions.NotAuthenticated.default_detail)


def test_the_framework_has_both_languages():
    """The comparison above would be vacuous if the framework spoke one language only."""
    assert _drf("fr", exceptions.NotAuthenticated.default_detail) != _drf(
        "en", exceptions.NotAuthenticated.default_detail
    )


@pytest.mark.parametrize(
    ("asked", "says"), [(None, "le code TOTP est faux"), ("en", "TOTP code is wrong")]
)
def test_the_admin_answers_in_the_language_asked_for(cast, asked, says):
    page = Client().post(
        "/admin/login/",
        {"username": "directeur", "password": PASSWORD, "otp_token": "000000"},
        **_headers(asked),
    )
    assert page.status_code == 200
    assert says.encode() in page.content


# --- labels: the admin's and the models' --------------------------------------------------------

# Proper names, the same in every language: the games, and the chances of the layout (English
# keeps rouge, noir, couleur and inverse, as RULES.md does).
# Proper names, the same in every language: the games, the chances, the ranks of the cards.
NAMES = {
    "Trente-et-Quarante",
    "Pharao",
    "Alliance",
    "rouge",
    "noir",
    "couleur",
    "inverse",
    *(rank.value for rank in Rank),
}


def _labels() -> list[tuple[str, object]]:
    """Every label the admin shows: models' names, fields' names, help and choices, the admin's
    column and field descriptions (list, record, inline), filters' titles."""
    from django.contrib import admin
    from django.db.models import Field

    found: list[tuple[str, object]] = []
    for model, model_admin in admin.site._registry.items():
        if model._meta.app_label == "auth":
            continue  # Django's own, translated by Django
        for admin_class in (model_admin, *model_admin.inlines):
            shown = admin_class.model if admin_class is not model_admin else model
            names = [
                *getattr(admin_class, "list_display", ()),
                *(admin_class.readonly_fields or ()),
                *(admin_class.fields or ()),
            ]
            meta = shown._meta
            found += [
                (f"{meta.label}", meta.verbose_name),
                (f"{meta.label}+s", meta.verbose_name_plural),
            ]
            for name in names:
                if name == "__str__":
                    continue
                method = getattr(admin_class, name, None)
                if method is not None:
                    owner = getattr(admin_class, "__name__", type(admin_class).__name__)
                    found.append((f"{owner}.{name}", method.short_description))
                    continue
                field = meta.get_field(name)
                assert isinstance(field, Field)
                found.append((f"{meta.label}.{name}", field.verbose_name))
                if field.help_text:
                    found.append((f"{meta.label}.{name} help", field.help_text))
                found += [
                    (f"{meta.label}.{name}={value}", label)
                    for value, label in (field.choices or [])
                    if label not in NAMES
                ]
        for list_filter in model_admin.list_filter:
            if isinstance(list_filter, type):
                found.append((list_filter.__name__, list_filter.title))
    return found


def test_every_label_of_the_admin_goes_through_the_catalog():
    """French in the code, marked (gettext_lazy): the reader's language picks the words."""
    from django.utils.functional import Promise

    plain = [where for where, label in _labels() if not isinstance(label, Promise)]
    assert plain == []
    assert len(_labels()) > 300


def test_no_label_carries_both_languages():
    """``"noir / rouge"`` is one label in two languages: each language has its own word now."""
    both = re.compile(r"\w / \w")
    assert [m for m in messages(read_po(PO)) if both.search(m)] == []
    with translation.override("fr"):
        assert [(w, str(label)) for w, label in _labels() if both.search(str(label))] == []
