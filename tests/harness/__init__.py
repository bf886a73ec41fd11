"""What tests share: fixtures, builders and helpers that more than one test module uses.

A test module imports its helpers from here (or from a helper module beside it, or its own
directory's conftest), never from another test module or another directory's conftest:
tests/test_layout.py holds the line.
"""
