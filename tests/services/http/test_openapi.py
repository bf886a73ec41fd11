"""The committed API documents agree with the code: OpenAPI 3.1, and the problem table."""

from __future__ import annotations

import json
import re

import pytest
from openapi_spec_validator import validate

from services.http.openapi import openapi_document, render
from services.http.problems import problem_catalog
from services.league.cli import OPENAPI_DIR
from services.league.registry import SERVICES
from services.league.server import package_version

DOCS = OPENAPI_DIR.parent


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_committed_document_matches_the_code(name: str) -> None:
    """docs/openapi/<service>.json is exactly what the endpoints generate; regenerate it with
    `league openapi --write` when this fails."""
    committed = (OPENAPI_DIR / f"{name}.json").read_text(encoding="utf-8")
    assert committed == render(openapi_document(SERVICES[name], package_version()))


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_document_is_valid_openapi_31(name: str) -> None:
    """Each generated document validates against the OpenAPI 3.1 schema."""
    document = openapi_document(SERVICES[name], package_version())
    assert document["openapi"] == "3.1.0"
    validate(json.loads(render(document)))


def test_every_route_is_documented_with_its_problems() -> None:
    """Every mint route appears with its method; POST bodies document 413, 415 and 422."""
    document = openapi_document(SERVICES["mint"], package_version())
    stamp = document["paths"]["/mint/stamp"]["post"]
    assert {"409", "413", "415", "422", "429"} <= set(stamp["responses"])
    problem = stamp["responses"]["422"]["content"]["application/problem+json"]["schema"]
    assert problem == {"$ref": "#/components/schemas/Problem"}
    feed = document["paths"]["/mint/events"]["get"]
    assert [p["name"] for p in feed["parameters"]] == ["after", "limit"]


def test_api_doc_problem_table_matches_the_code() -> None:
    """Every problem type docs/api.md lists exists with the status the doc gives it."""
    rows = re.findall(
        r"^\| `([a-z-]+)` \| (\d{3}) \|", (DOCS / "api.md").read_text(encoding="utf-8"), re.M
    )
    catalog = problem_catalog()
    assert len(rows) >= 15
    assert {slug: int(status) for slug, status in rows} == {
        slug: catalog[slug].status for slug, _ in rows
    }
