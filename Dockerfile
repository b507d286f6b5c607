FROM python:3.11-slim
WORKDIR /srv/tocsin
COPY pyproject.toml README.md requirements.lock ./
RUN pip install --no-cache-dir --require-hashes -r requirements.lock
COPY app app
COPY api api
COPY streams streams
COPY tables tables
RUN pip install --no-cache-dir --no-deps .
EXPOSE 8080
