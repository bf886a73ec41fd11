"""OpenAPI 3.1 documents generated from a service's endpoint declarations.

The schemas are pydantic's JSON Schema (2020-12, which OpenAPI 3.1 adopts), hoisted into
``components/schemas``; every error answer is the shared ``Problem`` as problem+json. The
committed documents under ``docs/openapi/`` are regenerated with ``league openapi --write``
and a test fails when they drift from the code.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pydantic import BaseModel
from pydantic.json_schema import JsonSchemaMode, JsonSchemaValue, models_json_schema

from ledger.address import ALPHABET as ADDRESS_ALPHABET
from ledger.api.problems import PROBLEM_JSON, Problem
from services.http.apps import PROBLEM_ENDPOINTS, Service, catalog_of
from services.http.endpoints import Endpoint
from services.http.problems import HTTP_SLUGS, problem_of

OPENAPI_VERSION = "3.1.0"
REF_TEMPLATE = "#/components/schemas/{model}"
PATH_PARAM = re.compile(r"\{(\w+)\}")

#: The plain HTTP problems every endpoint can answer: an unreadable request, a failure.
EVERY_ENDPOINT_HTTP = ("bad-request", "internal")
#: ... an endpoint with a path parameter besides: nothing there (an unknown slug, say).
PATH_PARAM_HTTP = ("not-found",)
#: ... an endpoint with a body besides: the body not arriving within the read timeout.
BODY_HTTP = ("request-timeout",)

_SYMBOL = f"[{re.escape(ADDRESS_ALPHABET)}]"
#: What each path parameter is, by name: an address in its canonical spelling (the server
#: also reads lenient ones), a problem slug.
PATH_PARAM_SCHEMAS: dict[str, dict[str, Any]] = {
    "address": {
        "type": "string",
        "pattern": f"^CZ-{_SYMBOL}{{4}}-{_SYMBOL}{{4}}-{_SYMBOL}{{4}}$",
        "description": "An address, CZ-XXXX-XXXX-XXXX: ten Crockford base32 symbols of the "
        "key's hash and two check symbols (any other spelling the check refuses is "
        "bad-address)",
    },
    "slug": {"type": "string", "pattern": "^[a-z][a-z0-9-]{0,63}$"},
}

ModelKey = tuple[type[BaseModel], JsonSchemaMode]


def _models(endpoints: tuple[Endpoint, ...]) -> list[ModelKey]:
    wanted: list[ModelKey] = [(Problem, "serialization")]
    for ep in endpoints:
        if ep.body is not None:
            wanted.append((ep.body, "validation"))
        if isinstance(ep.response, type) and issubclass(ep.response, BaseModel):
            wanted.append((ep.response, "serialization"))
    unique: list[ModelKey] = []
    for item in wanted:
        if item not in unique:
            unique.append(item)
    return unique


def _parameters(ep: Endpoint) -> list[dict[str, Any]]:
    params: list[dict[str, Any]] = []
    for name in PATH_PARAM.findall(ep.path):
        schema = dict(PATH_PARAM_SCHEMAS.get(name, {"type": "string"}))
        path_param: dict[str, Any] = {"name": name, "in": "path", "required": True}
        if "description" in schema:
            path_param["description"] = schema.pop("description")
        path_param["schema"] = schema
        params.append(path_param)
    if ep.query is not None:
        schema = ep.query.model_json_schema(ref_template=REF_TEMPLATE)
        required = set(schema.get("required", ()))
        for name, prop in schema["properties"].items():
            param: dict[str, Any] = {"name": name, "in": "query", "required": name in required}
            if "description" in prop:
                param["description"] = prop.pop("description")
            prop.pop("title", None)
            param["schema"] = prop
            params.append(param)
    return params


def _problem_answers(ep: Endpoint) -> dict[str, Any]:
    """One response per status the endpoint can answer, naming the problem types behind it."""
    http_status = {slug: status for status, slug in HTTP_SLUGS.items()}
    slugs: dict[int, set[str]] = {}
    http: tuple[str, ...] = EVERY_ENDPOINT_HTTP
    if PATH_PARAM.search(ep.path):
        http += PATH_PARAM_HTTP
    if ep.body is not None:
        http += BODY_HTTP
    for slug in http:
        slugs.setdefault(http_status[slug], set()).add(slug)
    for error in ep.refusals:
        slug, status = problem_of(error)
        slugs.setdefault(status, set()).add(slug)
    ref = {"$ref": REF_TEMPLATE.format(model="Problem")}
    return {
        str(status): {
            "description": "A problem details object (RFC 9457): "
            + ", ".join(sorted(slugs[status])),
            "content": {PROBLEM_JSON: {"schema": ref}},
        }
        for status in sorted(slugs)
    }


def _operation(ep: Endpoint, refs: dict[ModelKey, JsonSchemaValue]) -> dict[str, Any]:
    if ep.response is str:
        content = {"text/plain": {"schema": {"type": "string"}}}
    else:
        if not issubclass(ep.response, BaseModel):
            raise TypeError(f"{ep.operation_id} answers neither a model nor text")
        content = {"application/json": {"schema": refs[(ep.response, "serialization")]}}
    operation: dict[str, Any] = {"operationId": ep.operation_id, "summary": ep.summary}
    if ep.description:
        operation["description"] = ep.description
    params = _parameters(ep)
    if params:
        operation["parameters"] = params
    if ep.body is not None:
        operation["requestBody"] = {
            "required": True,
            "content": {"application/json": {"schema": refs[(ep.body, "validation")]}},
        }
    operation["responses"] = {
        "200": {"description": ep.summary, "content": content},
        **_problem_answers(ep),
    }
    return operation


def openapi_document(service: Service, version: str) -> dict[str, Any]:
    """The OpenAPI 3.1 document of ``service``."""
    endpoints = service.endpoints + PROBLEM_ENDPOINTS
    models = _models(endpoints)
    schemas, defs = models_json_schema(models, ref_template=REF_TEMPLATE)
    # pydantic keys its answer by model class or pydantic dataclass; ours are all models.
    refs: dict[ModelKey, JsonSchemaValue] = {key: schemas[key] for key in models}
    paths: dict[str, dict[str, Any]] = {}
    for ep in endpoints:
        paths.setdefault(ep.path, {})[ep.method.lower()] = _operation(ep, refs)
    problems = {
        slug: problem.model_dump(exclude={"slug"})
        for slug, problem in catalog_of(endpoints).items()
    }
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": service.title, "version": version, "description": service.description},
        "paths": paths,
        "components": {"schemas": defs.get("$defs", {})},
        # Every problem type this service can answer (and only those): what GET
        # /problems/{slug} serves for it.
        "x-problem-types": problems,
    }


def render(document: dict[str, Any]) -> str:
    """The committed text form: sorted keys, two-space indent, trailing newline."""
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
