"""The HTTP client of the league's API: what a player's client, an auditor and the league's own
services use to call a league (``apiclient.league.LeagueClient``), with the builders of the
signed requests it sends.

It stands on the protocol alone (``ledger/``): no server, no database, no player's wallet or
play code. Services and the player's client (``clients/``) both import it; a service never
imports ``clients`` (import-linter contracts in pyproject.toml).
"""
