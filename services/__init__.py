"""The league's services: thin async handlers over ``ledger`` and ``services.eventlog``."""
