"""The player's side: the command line ``cz`` (:mod:`.cz`, one module per command group:
``cz_table`` and ``cz_board`` for THE WINDOW's tables, ``cz_charter`` for the charter game,
``cz_play`` for the campaign, the store and bundles, ``cz_seats`` for the player's seat at a
table, ``cz_league_play`` and ``cz_witnessed`` for witnessed tables and duels, ``cz_wallet``,
``cz_public``, ``cz_session``, ``cz_league``, ``cz_trade``, ``cz_notes``) and the wallet
(:mod:`.wallet`), calling a league through the API client (``apiclient``). No database, no
server code."""
