# SphereScope image: the engine, the run store, the workers and the dashboard.
#   CPU (default):  docker build -t spherescope .
#   CUDA:           docker build --build-arg TORCH_INDEX_URL=https://download.pytorch.org/whl/cu128 \
#                     -t spherescope-gpu .
FROM python:3.11-slim

ARG TORCH_INDEX_URL=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    SPHERESCOPE_HOME=/data

RUN useradd --create-home --uid 1000 spherescope \
    && mkdir -p /data && chown spherescope:spherescope /data

WORKDIR /opt/spherescope
# torch first (its own index decides CPU or CUDA wheels), so code changes keep this layer
RUN pip install --index-url "${TORCH_INDEX_URL}" torch==2.13.0 torchvision==0.28.0
COPY pyproject.toml README.md constraints.txt ./
COPY sphere_engine ./sphere_engine
COPY db ./db
COPY worker ./worker
COPY app ./app
COPY spherescope ./spherescope
RUN pip install -c constraints.txt .

USER spherescope
VOLUME ["/data"]
EXPOSE 8501
# Everything in one container (private Redis, a worker, the app); compose splits them.
CMD ["spherescope", "up", "--host", "0.0.0.0", "--port", "8501"]
