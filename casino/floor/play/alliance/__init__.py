"""Alliance at the cercle table (RULES.md §3): seated players, deals recorded act by act, marks
settled between the players' accounts, the house's fee in the fee box."""
