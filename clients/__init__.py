"""Clients of THE WINDOW: the player CLI ``cz`` and the league API client."""
