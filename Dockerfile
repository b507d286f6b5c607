FROM python:3.11-slim
WORKDIR /srv/tocsin
COPY pyproject.toml README.md ./
COPY app app
COPY api api
COPY streams streams
COPY tables tables
RUN pip install --no-cache-dir .
EXPOSE 8080
