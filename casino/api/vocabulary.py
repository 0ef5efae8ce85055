"""The error vocabulary of the API: every code a refusal may carry, its HTTP status and meaning,
and, per operation, the codes it may answer.

Statuses follow one rule: 400 a malformed request (the JSON, a field's type or range, a header);
401 no valid credentials; 403 a person without the right (a role, a post, four eyes); 404 an
unknown reference; 409 a record whose state does not allow the act; 422 an act the rules of the
house refuse (a late stake, a foreign card); 413, 415, 429 and 503 as HTTP means them.

The domain codes an operation may answer are read from the code itself, not declared: the
exceptions its service raises, and those of every function of ours it calls (``raised_by``). A
declared list would rot; this one is as true as the code, and the schema tests check it from the
other side (every refusal a test provokes must be one the schema names for that operation).
"""

from __future__ import annotations

import ast
import functools
import inspect
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from django.utils.translation import gettext_lazy as _

from casino.errors import DomainError

OUR_PACKAGES = ("casino.", "audit.", "shoes.")


@dataclass(frozen=True)
class Code:
    code: str
    status: int
    meaning: str


# The framework's refusals and those of the API's own edge (casino/api/errors.py maps DRF's).
FRAMEWORK = (
    Code("bad_json", 400, _("Le corps de la requête n'est pas du JSON.")),
    Code("missing_field", 400, _("Un champ obligatoire manque; `where` le nomme.")),
    Code("unknown_field", 400, _("Un champ ou un paramètre que l'opération ne connaît pas.")),
    Code("invalid", 400, _("Une valeur du mauvais type JSON, hors bornes ou mal formée.")),
    Code("not_authenticated", 401, _("Aucun jeton ni session.")),
    Code("authentication_failed", 401, _("Des identifiants refusés.")),
    Code("token_invalid", 401, _("Un jeton inconnu.")),
    Code("token_expired", 401, _("Un jeton expiré.")),
    Code("token_revoked", 401, _("Un jeton révoqué (déconnexion, mot de passe changé).")),
    Code("account_inactive", 401, _("Le compte du porteur du jeton est inactif.")),
    Code(
        "role_required",
        403,
        _("La personne ne tient pas un rôle que l'acte ou la lecture demande."),
    ),
    Code("not_found", 404, _("La référence ne désigne aucun enregistrement.")),
    Code("method_not_allowed", 405, _("La ressource ne prend pas cette méthode.")),
    Code("not_acceptable", 406, _("L'API ne répond qu'en JSON.")),
    Code(
        "unsupported_media_type",
        415,
        _("Le corps n'est pas du type attendu (JSON, ou multipart pour un fichier)."),
    ),
    Code("too_many_attempts", 429, _("Trop d'échecs de connexion: attendre, puis réessayer.")),
    Code(
        "unavailable",
        503,
        _("La base de données ou le courtier est injoignable: réessayer après `Retry-After`."),
    ),
)

# What every operation of a kind may answer, whatever it does.
EVERY_OPERATION = (
    "not_authenticated",
    "authentication_failed",
    "token_invalid",
    "token_expired",
    "token_revoked",
    "account_inactive",
    "unavailable",
)
EVERY_WRITE = ("bad_json", "missing_field", "unknown_field", "invalid", "unsupported_media_type")
EVERY_IDEMPOTENT_WRITE = ("idempotency_key_required", "idempotency_key_reused")
EVERY_READ = ("role_required",)
EVERY_COLLECTION = ("unknown_field", "invalid", "invalid_page")
EVERY_ITEM = ("not_found", "not_on_duty")


def domain_errors() -> list[type[DomainError]]:
    """Every refusal class of ours, found by walking the hierarchy (the apps' modules are loaded
    by the time the schema is asked for)."""
    found: list[type[DomainError]] = []
    stack: list[type[DomainError]] = [DomainError]
    while stack:
        kind = stack.pop()
        if kind.__module__.startswith(OUR_PACKAGES):
            found.append(kind)
        stack.extend(kind.__subclasses__())
    return found


def catalogue() -> dict[str, Code]:
    """Every code with its status and meaning (the class's docstring, first paragraph)."""
    codes = {c.code: c for c in FRAMEWORK}
    for kind in sorted(domain_errors(), key=lambda k: k.code):
        meaning = (inspect.getdoc(kind) or "").split("\n\n")[0].replace("\n", " ")
        codes.setdefault(kind.code, Code(kind.code, kind.http_status, meaning))
    return codes


def _resolve(node: ast.expr, scope: dict[str, Any], owner: type | None) -> Any:
    """The object a name or dotted name stands for in a function's module (``self.x`` and
    ``type(self).x`` on the class ``owner`` the function is a method of), or None."""
    if isinstance(node, ast.Name):
        return scope.get(node.id)
    if isinstance(node, ast.Attribute):
        value = node.value
        is_self = isinstance(value, ast.Name) and value.id == "self"
        is_type_of_self = (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "type"
        )
        if owner is not None and (is_self or is_type_of_self):
            return getattr(owner, node.attr, None)
        found = _resolve(value, scope, owner)
        return getattr(found, node.attr, None) if found is not None else None
    return None


def _ours(function: Any) -> bool:
    return inspect.isfunction(function) and function.__module__.startswith(OUR_PACKAGES)


def _calls_and_raises(function: Callable[..., Any], owner: type | None) -> Iterator[Any]:
    try:
        source = textwrap.dedent(inspect.getsource(function))
    except (OSError, TypeError):
        return
    scope = function.__globals__
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            yield _resolve(target, scope, owner)
        elif isinstance(node, ast.Call):
            found = _resolve(node.func, scope, owner)
            if found is None and isinstance(node.func, ast.Attribute):
                yield from _game_answers(node.func.attr)
            else:
                yield found


def _game_answers(name: str) -> list[Any]:
    """Every game's answer to the floor core's question ``name``: the core asks whichever game
    the table plays (``game_module(table.game).check_closable(shift)``), so a refusal of any
    game's answer is one the act may meet."""
    from casino.floor.registry import PACKAGES, GameModule, game_module

    if not inspect.isfunction(getattr(GameModule, name, None)):
        return []
    return [getattr(type(game_module(game)), name) for game in PACKAGES]


def _returned_error(function: Callable[..., Any]) -> type[DomainError] | None:
    """A function that builds the refusal it is raised with (``raise card_refusal_record(…)``)."""
    annotation = function.__annotations__.get("return")
    kind = function.__globals__.get(annotation) if isinstance(annotation, str) else annotation
    return kind if inspect.isclass(kind) and issubclass(kind, DomainError) else None


def raised_by(
    function: Callable[..., Any], owner: type | None = None
) -> frozenset[type[DomainError]]:
    """The refusals ``function`` (a method of ``owner``, if given) may raise: its own ``raise``s
    and those of every function of ours it calls, followed through modules and the owner's
    methods (methods called on other objects are not followed)."""
    return _raised_by(inspect.unwrap(function), owner)


@functools.cache
def _raised_by(function: Callable[..., Any], owner: type | None) -> frozenset[type[DomainError]]:
    found: set[type[DomainError]] = set()
    seen: set[Any] = set()
    stack: list[tuple[Any, type | None]] = [(function, owner)]
    while stack:
        current, current_owner = stack.pop()
        if current in seen:
            continue
        seen.add(current)
        for target in _calls_and_raises(current, current_owner):
            if inspect.isclass(target) and issubclass(target, DomainError):
                found.add(target)
            elif _ours(inspect.unwrap(target) if callable(target) else target):
                target = inspect.unwrap(target)
                returned = _returned_error(target)
                if returned is not None:
                    found.add(returned)
                # A method of the owner's class stays a method of it (``self.x`` resolves there).
                is_method = current_owner is not None and target.__qualname__.split(".")[0] in {
                    k.__name__ for k in current_owner.__mro__
                }
                stack.append((target, current_owner if is_method else None))
    return frozenset(found)
