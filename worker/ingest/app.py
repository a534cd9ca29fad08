"""The ingest service's HTTP API (FastAPI): every route needs the stack's token.

- ``POST /v1/runs``: create a run (its id); ``GET /v1/runs/{id}``: its record;
  ``POST /v1/runs/list``: records by status / kind (an elastic job finds its run);
- ``POST /v1/runs/{id}/claim``: ``queued`` → ``running`` for one caller (409 otherwise);
- ``POST /v1/runs/{id}/batches``: numbered batches applied once each, in order, and the
  writer's heartbeat; answers ``acked`` and the run's cancel flag. With ``stream``: a
  side stream's batches (what a later command adds, e.g. a model export), numbered
  apart, no heartbeat;
- ``GET /v1/runs/{id}/checkpoints`` / ``evaluations``: the run's recorded checkpoints
  and evaluation metrics (``spherescope export-model`` on the writer's machine).
One request per run at a time (a lock per run): a run has one writer (and side streams)."""

from __future__ import annotations

import hmac
import logging
import threading
from collections import defaultdict
from typing import Any

from fastapi import Depends, FastAPI, HTTPException, Request
from fastapi.responses import JSONResponse

from db.lost_runs import RECONNECTING
from db.remote.wire import decode, record_to_json
from db.store import RunStore
from worker.ingest.apply import BadBatch, apply_batches

log = logging.getLogger("spherescope.ingest")


def create_app(store: RunStore, token: str) -> FastAPI:
    if not token:
        raise ValueError("the ingest service needs a token (SPHERESCOPE_TOKEN)")
    app = FastAPI(title="SphereScope ingest", docs_url=None, redoc_url=None, openapi_url=None)
    locks: defaultdict[str, threading.Lock] = defaultdict(threading.Lock)

    def authorised(request: Request) -> None:
        given = request.headers.get("authorization", "").removeprefix("Bearer ").strip()
        if not (given and hmac.compare_digest(given.encode(), token.encode())):
            client = request.client.host if request.client else "?"
            log.warning("refused %s from %s: wrong token", request.url.path, client)
            raise HTTPException(401, "wrong token")

    def record_of(run_id: str) -> Any:
        try:
            return store.get_run(run_id)
        except ValueError as error:
            raise HTTPException(404, str(error)) from None

    @app.exception_handler(ValueError)
    async def bad_value(request: Request, error: ValueError) -> JSONResponse:
        return JSONResponse({"detail": str(error).splitlines()[0]}, status_code=422)

    @app.get("/v1/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.post("/v1/runs", dependencies=[Depends(authorised)])
    def create(body: dict[str, Any]) -> dict[str, str]:
        options = {key: body.get(key) for key in ("name", "sweep_id")}
        if body.get("project"):
            options["project"] = body["project"]
        status = body.get("status") or "queued"
        run_id = store.create_run(
            decode(body.get("config") or {}),
            kind=body.get("kind") or "train",
            tags=body.get("tags") or (),
            status=status,
            **options,
        )
        if status == "running":  # a remote writer: the lost-run rule gives it its grace
            store.set_status(run_id, "running", remote=True)
        return {"run_id": run_id}

    @app.get("/v1/runs/{run_id}", dependencies=[Depends(authorised)])
    def get(run_id: str) -> dict[str, Any]:
        return record_to_json(record_of(run_id))

    @app.post("/v1/runs/list", dependencies=[Depends(authorised)])
    def listing(body: dict[str, Any]) -> list[dict[str, Any]]:
        runs = store.list_runs(status=body.get("status") or None, kind=body.get("kind"))
        return [record_to_json(record) for record in runs]

    @app.post("/v1/runs/{run_id}/claim", dependencies=[Depends(authorised)])
    def claim(run_id: str, body: dict[str, Any]) -> dict[str, str]:
        record_of(run_id)
        with locks[run_id]:
            try:
                store.start_run(run_id, **decode(body), remote=True)
            except ValueError as error:
                raise HTTPException(409, str(error)) from None
        return {"status": "running"}

    @app.post("/v1/runs/{run_id}/executor", dependencies=[Depends(authorised)])
    def executor(run_id: str, body: dict[str, Any]) -> dict[str, str]:
        from db.scheduler_record import write_executor

        record_of(run_id)
        write_executor(store.files, run_id, decode(body))
        return {}

    @app.post("/v1/runs/{run_id}/delete", dependencies=[Depends(authorised)])
    def delete(run_id: str) -> dict[str, str]:
        if record_of(run_id).status != "queued":
            raise HTTPException(409, f"run {run_id} has started: not deleting it")
        store.delete_run(run_id)
        return {}

    @app.post("/v1/runs/{run_id}/batches", dependencies=[Depends(authorised)])
    def batches(run_id: str, body: dict[str, Any]) -> dict[str, Any]:
        record = record_of(run_id)
        stream = body.get("stream") or ""
        with locks[run_id]:
            try:
                done = apply_batches(store, run_id, list(body.get("batches") or []), stream)
            except (BadBatch, KeyError, TypeError) as error:
                raise HTTPException(422, f"run {run_id}: {error}") from None
            if stream:  # a later command's additions say nothing of the writer's life
                return {"acked": done, "cancel": False, "cancel_reason": ""}
            beat = body.get("heartbeat")
            if beat is not None:
                store.heartbeat(run_id, beat.get("step"), beat.get("total"))
            back = record.status == "running" and record.status_message.startswith(RECONNECTING)
            if back or record.status == "lost":  # its writer is back (even after the grace)
                current = store.get_run(run_id)
                if current.status in ("running", "lost"):
                    message = "" if current.status == "running" else "its writer came back"
                    store.set_status(run_id, "running", message)
        return {
            "acked": done,
            "cancel": store.cancel_requested(run_id),
            "cancel_reason": store.cancel_reason(run_id),
        }

    @app.get("/v1/runs/{run_id}/checkpoints", dependencies=[Depends(authorised)])
    def checkpoints(run_id: str) -> dict[str, list[Any]]:
        from db import queries

        record_of(run_id)
        frame = queries.checkpoints(store, run_id)
        return {"step": frame["step"].astype(int).tolist(), "path": frame["path"].tolist()}

    @app.get("/v1/runs/{run_id}/evaluations", dependencies=[Depends(authorised)])
    def evaluations(run_id: str) -> dict[str, list[Any]]:
        from db import queries
        from db.json_plain import json_plain

        record_of(run_id)
        frame = queries.eval_series(store, run_id)
        columns = {name: frame[name].tolist() for name in ("step", "name", "value")}
        return json_plain(columns)  # NaN as null

    return app
