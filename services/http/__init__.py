"""The HTTP layer every service shares.

An app factory with the problem+json middleware and body limits (``apps``), the typed error to
RFC 9457 translation (``problems``), strict JSON and query parsing into pydantic models
(``bodies``), endpoint declarations that serve both as routes and as the source of each
service's OpenAPI document (``endpoints``, ``openapi``).
"""
