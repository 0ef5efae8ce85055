"""What each game does at the table: one package per game, all of the same shape
(``casino/floor/registry.py`` says which parts a package has and how the core asks it)."""
