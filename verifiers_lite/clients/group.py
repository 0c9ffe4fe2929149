"""ClientGroup: several endpoints of one model, usable as one client or as an endpoint list."""

from __future__ import annotations

from typing import Any

from verifiers_lite.clients.routing import EndpointRouter
from verifiers_lite.core.messages import Message
from verifiers_lite.core.model_client import ChatResponse
from verifiers_lite.core.pricing import ModelPrice, declared_price


class ClientGroup(list[Any]):
    """A list of model clients serving the same model (e.g. the embedded model's server
    processes). Passed to ``evaluate``/``generate`` it is an endpoint list, routed group-sticky
    like any list of clients; called directly (``await group.chat(...)``, a judge) each request
    goes to the endpoint with the fewest requests in flight, through the same router: an
    endpoint that keeps failing, or whose server crashed, is passed over while another is
    healthy.

    Args:
        clients: the model clients, at least one, all serving the same model.
    """

    def __init__(self, clients: list[Any]) -> None:
        if not clients:
            raise ValueError("ClientGroup needs at least one client")
        super().__init__(clients)
        self._router = EndpointRouter(list(clients), None)

    @property
    def base_url(self) -> str:
        """The first endpoint's URL (each member keeps its own)."""
        return str(getattr(self[0], "base_url", ""))

    @property
    def text_only(self) -> bool | str:
        """A member's ``text_only`` when one reads text only (so a prompt is refused up front)."""
        return next((c.text_only for c in self if getattr(c, "text_only", False)), False)

    @property
    def price(self) -> ModelPrice | None:
        """The members' declared price when they all declare the same one."""
        return declared_price(list(self))

    async def chat(
        self,
        model: str,
        messages: list[Message],
        sampling_args: dict[str, Any] | None = None,
        tools: list[dict[str, Any]] | None = None,
    ) -> ChatResponse:
        """One turn on the least busy healthy endpoint."""
        return await self._router.pick(least_busy=True).chat(model, messages, sampling_args, tools)

    def __repr__(self) -> str:
        return f"ClientGroup({len(self)} endpoints: {', '.join(str(getattr(c, 'base_url', c)) for c in self)})"
