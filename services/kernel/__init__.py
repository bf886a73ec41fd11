"""The service kernel: what every league service stands on and none owns.

Settings, founding and keys, the embedded PostgreSQL, composing services into one app, the
feed follower and the background checkpointer. Services import this package (and
``services.http``, ``services.eventlog``) but never each other; ``services.league`` (the
operator's CLI) is the only package above the services.
"""
