"""Prometheus metrics at ``GET /metrics`` (prometheus-client), one registry per app.

- ``league_http_requests_total{method,route,status}`` and
  ``league_http_request_duration_seconds{method,route}``: every answer, counted and timed by
  the middleware. ``route`` is the route's template (``/provenance/{serial}``), never the raw
  path, and ``unmatched`` for a path no route serves, so a thousand serials or a scan of random
  paths make one series, not a thousand; a method outside HTTP's usual ones is ``other``.
- **Figures** the services register (:class:`Figure`): read when ``/metrics`` is scraped, from
  the service's own tables (:func:`sql_figure`) or elsewhere (the feeds' lag). A figure that
  cannot be read now is left out of that scrape and logged, never an error of the scrape.

``/metrics`` is an operator endpoint: not in the OpenAPI documents, not proxied by the gateway.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from aiohttp import web
from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import choose_encoder
from prometheus_client.registry import Collector

from services.http.endpoints import Endpoint
from services.http.pool import POOL

log = logging.getLogger(__name__)

#: One figure's samples: label values (in the figure's label order) and the value.
Samples = Sequence[tuple[Sequence[str], float]]
#: Seconds one figure may take to read before the scrape goes on without it.
FIGURE_TIMEOUT = 3.0
#: Request latency buckets, in seconds (the league's target is p99 under 100 ms).
LATENCY_BUCKETS = (
    0.001,
    0.0025,
    0.005,
    0.01,
    0.025,
    0.05,
    0.1,
    0.25,
    0.5,
    1.0,
    2.5,
    5.0,
    10.0,
)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"


@dataclass(frozen=True, slots=True)
class Figure:
    """A figure a service publishes, read when ``/metrics`` is scraped. Figures of the same
    name (one per service in a process serving several) are one metric family."""

    name: str
    help: str
    labels: tuple[str, ...]
    read: Callable[[web.Application], Awaitable[Samples]]
    kind: Literal["gauge", "counter"] = "gauge"


def sql_figure(
    name: str,
    help: str,
    labels: tuple[str, ...],
    query: str,
    kind: Literal["gauge", "counter"] = "gauge",
) -> Figure:
    """A figure read by ``query`` over the app's pool: each row is the label values (text),
    then the value."""

    async def read(app: web.Application) -> Samples:
        rows = await app[POOL].fetch(query)
        return [([str(v) for v in row[:-1]], float(row[-1] or 0)) for row in rows]

    return Figure(name, help, labels, read, kind)


class Metrics(Collector):
    """An app's registry: the request metrics, and the figures collected at each scrape."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=False)
        self.requests = Counter(
            "league_http_requests",
            "Answers, by method, route template and status",
            ("method", "route", "status"),
            registry=self.registry,
        )
        self.latency = Histogram(
            "league_http_request_duration_seconds",
            "Time to answer, by method and route template",
            ("method", "route"),
            buckets=LATENCY_BUCKETS,
            registry=self.registry,
        )
        self.figures: list[Figure] = []
        #: Each (method, route, status)'s counter and histogram, looked up once.
        self._series: dict[tuple[str, str, int], tuple[Counter, Histogram]] = {}
        self._collected: list[Metric] = []
        self.registry.register(self)

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method if method in METHODS else "other", route, status)
        series = self._series.get(key)
        if series is None:  # bounded: methods x route templates x statuses
            series = self._series[key] = (
                self.requests.labels(key[0], route, str(status)),
                self.latency.labels(key[0], route),
            )
        series[0].inc()
        series[1].observe(seconds)

    def collect(self) -> Iterator[Metric]:
        return iter(self._collected)

    async def refresh(self, app: web.Application) -> None:
        """Read every figure now (concurrently), for the next :meth:`collect`."""
        read = await asyncio.gather(*(self._read(figure, app) for figure in self.figures))
        families: dict[str, Metric] = {}
        for figure, samples in zip(self.figures, read, strict=True):
            if samples is None:
                continue
            family = families.get(figure.name) or families.setdefault(figure.name, _family(figure))
            for values, value in samples:
                family.add_metric(list(values), value)  # type: ignore[attr-defined]
        self._collected = list(families.values())

    @staticmethod
    async def _read(figure: Figure, app: web.Application) -> Samples | None:
        try:
            return await asyncio.wait_for(figure.read(app), FIGURE_TIMEOUT)
        except Exception as exc:  # a figure never fails the scrape
            log.warning("metrics: cannot read %s now: %s", figure.name, type(exc).__name__)
            return None


def _family(figure: Figure) -> Metric:
    kind = CounterMetricFamily if figure.kind == "counter" else GaugeMetricFamily
    return kind(figure.name, figure.help, labels=list(figure.labels))


#: The app's metrics (every app :func:`services.http.apps.new_app` makes has one).
METRICS = web.AppKey("metrics", Metrics)


def add_figure(app: web.Application, figure: Figure) -> None:
    """Publish ``figure`` at the app's ``/metrics`` (registered before the app starts)."""
    app[METRICS].figures.append(figure)


def add_figures(app: web.Application, figures: Iterable[Figure]) -> None:
    for figure in figures:
        add_figure(app, figure)


def route_of(request: web.Request) -> str:
    """The template of the route that served ``request``; ``unmatched`` when none did."""
    resource = request.match_info.route.resource
    return resource.canonical if resource is not None else UNMATCHED


async def metrics(request: web.Request) -> web.Response:
    """The app's metrics in the Prometheus text format (or OpenMetrics, when asked for)."""
    collected = request.app[METRICS]
    await collected.refresh(request.app)
    encoder, content_type = choose_encoder(request.headers.get("Accept", ""))
    return web.Response(body=encoder(collected.registry), headers={"Content-Type": content_type})


def timer() -> float:
    return time.perf_counter()


METRICS_ENDPOINTS = (Endpoint("GET", "/metrics", "Prometheus metrics (operator)", metrics, str),)
