"""RFC 9457 problem details: the one shape of every refusal a league service answers.

The ``type`` member is the relative URI ``/problems/<slug>``; each service serves what its
slugs mean there and lists them in its OpenAPI document.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

PROBLEM_JSON = "application/problem+json"
PROBLEM_PREFIX = "/problems/"


class Problem(BaseModel):
    """An RFC 9457 problem details object."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="URI reference naming the problem type: /problems/<slug>")
    title: str = Field(description="Short summary of the problem type")
    status: int = Field(description="The HTTP status code of this answer")
    detail: str = Field(description="What went wrong with this request, for a person")
    instance: str = Field(description="The request path this problem occurred at")

    @property
    def slug(self) -> str:
        """The problem type's slug: ``/problems/run-exhausted`` is ``run-exhausted``."""
        return self.type.removeprefix(PROBLEM_PREFIX)


class ProblemType(BaseModel):
    """What one problem type means: served at ``/problems/<slug>``."""

    slug: str
    title: str
    status: int
    description: str
