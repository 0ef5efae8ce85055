from tests.shoes.conftest import receive, verified  # noqa: F401  the card room's fixtures
