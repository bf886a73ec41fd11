"""The operator's side: settings, embedded PostgreSQL, the all-in-one server, the CLI."""
