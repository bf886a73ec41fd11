# One image for every league service: `league serve mint`, `league serve notary`,
# `league serve treasury` and the one-shot `league migrate` (see docker-compose.yml).
# It holds no key and no manifest: those are mounted at run time (secrets and a config).

FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY ledger ledger
COPY game game
COPY apiclient apiclient
COPY auditor auditor
COPY clients clients
COPY services services
COPY migrations migrations
RUN python -m venv /opt/league && /opt/league/bin/pip install --no-cache-dir '.[server]'

FROM python:3.11-slim
# A fixed uid: key and pgpass files mounted as compose secrets keep their host owner and mode
# (0600), so they are chowned to this uid on the host (docs/operations.md).
RUN groupadd --system --gid 10001 league \
    && useradd --system --uid 10001 --gid league --home-dir /var/lib/league \
       --shell /usr/sbin/nologin league \
    && mkdir -p /var/lib/league/checkpoints \
    && chown -R league:league /var/lib/league \
    && chmod 0700 /var/lib/league /var/lib/league/checkpoints
COPY --from=build /opt/league /opt/league
ENV PATH=/opt/league/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    LEAGUE_HOME=/var/lib/league \
    LEAGUE_HOST=0.0.0.0 \
    LEAGUE_PORT=8080
USER league
WORKDIR /var/lib/league
EXPOSE 8080
CMD ["league", "serve"]
