"""The committed API documents agree with the code: OpenAPI 3.1, and the problem table."""

from __future__ import annotations

import json
import re

import pytest
from openapi_spec_validator import validate

from services.http.apps import catalog_of
from services.http.openapi import openapi_document, render
from services.http.problems import PROBLEMS, problem_types
from services.kernel.compose import package_version
from services.league.cli import OPENAPI_DIR
from services.league.registry import SERVICES

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
    catalog = problem_types(PROBLEMS)
    assert len(rows) >= 15
    assert {slug: int(status) for slug, status in rows} == {
        slug: catalog[slug].status for slug, _ in rows
    }


@pytest.mark.parametrize("name", sorted(SERVICES))
def test_document_lists_exactly_the_problems_the_service_answers(name: str) -> None:
    """x-problem-types is the service's catalog (what /problems/{slug} serves), and every
    slug an operation's responses name is in it."""
    service = SERVICES[name]
    document = openapi_document(service, package_version())
    listed = document["x-problem-types"]
    assert set(listed) == set(catalog_of(service.endpoints))
    for operations in document["paths"].values():
        for operation in operations.values():
            for status, response in operation["responses"].items():
                if status == "200":
                    continue
                named = response["description"].split(": ", 1)[1].split(", ")
                assert set(named) <= set(listed)
                assert all(listed[slug]["status"] == int(status) for slug in named)
