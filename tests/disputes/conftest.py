"""A second chef de partie: the dispute's raiser or a recorder of the contested acts is kept out of
its review, so another chef takes it up."""

from __future__ import annotations

import pytest

from casino.people.roles import Role
from casino.people.services import staff_create


@pytest.fixture
def chef2(cast):
    return staff_create(
        actor=cast.directeur,
        username="chef2",
        full_name="Second Chef",
        roles=[Role.CHEF_DE_PARTIE],
    )
