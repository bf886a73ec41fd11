"""``cz web``: the game in the player's browser, served by this client on 127.0.0.1.

The booths and buttons of Book V (Topbar, Exchange, Vault, Provenance) and the tables of
Book IV as pages, run by the same wallet, engine and league client as the terminal's ``cz``:
every wallet or league action is the ``cz`` command itself, run in this process
(:mod:`clients.web.calls`). The modules: :mod:`.security` (the per-launch secret, the first
segment of every page's path, the Host and Origin checks, the CSP), :mod:`.app` (the
application, the server and the launch file the browser is handed), :mod:`.launch` (one
launch's state: the confirmations and signings under way, the outcomes shown, the table),
:mod:`.values` (what a form may send), :mod:`.booths` (the pages of Book V and the
confirmations before signing), :mod:`.tables` (tables by clicks, the No-Go
drill, replays) over :mod:`.sitting` (the table being played and the drills shown),
:mod:`.render` (the templates) and :mod:`.command` (the ``web`` subcommand, which imports the
rest only when it runs).
"""
