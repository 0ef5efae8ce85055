"""Background work of the floor: each game's (``<package>.tasks``), registered in every process."""

from casino.floor.registry import game_parts

game_parts("tasks")
