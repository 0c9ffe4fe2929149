"""``POST /rollout/cancel`` (ids | prefix | all), reading its body like admission does."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

from verifiers_lite.server.protocol import CancelRequest, CancelResponse

from .bodies import invalid, read_json
from .service import RolloutService


def make_cancel_endpoint(service: RolloutService) -> Callable[[Request], Awaitable[Response]]:
    """The endpoint bound to ``service``: per-id dispositions, or a 4xx for a bad body."""

    async def cancel(request: Request) -> Response:
        data = await read_json(request)
        if isinstance(data, Response):
            return data
        try:
            body = CancelRequest.model_validate(data)
        except ValidationError as exc:
            return invalid([dict(e) for e in exc.errors(include_url=False, include_input=False)])
        if body.ids is not None:
            dispositions = await service.cancel_ids(body.ids)
        else:
            dispositions = await service.cancel_matching(body.prefix)
        return JSONResponse(CancelResponse(dispositions=dispositions).model_dump())

    return cancel
