"""What the served page's drawn components share on the server: numbered frames of numbers,
sent packed, and the one check a page's number passes before it reaches the state."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import param

from app.compat import write_to_rendered_models
from app.page.frames import numbers_frame, packed_frame
from app.served.channel import SessionChannel, frame_message
from app.served.channel_address import CHANNEL_KEY, CHANNEL_NAME
from app.simulation.model import SimulationModel

CHANNEL_ADDRESS = {"name": CHANNEL_NAME, "key": CHANNEL_KEY}
"""Where the page finds the session's channel (app/served/channel_address.py), as
app/page/web/served/channel.js reads it."""


def channel_address_parameter() -> param.Dict:
    """The ``channel_address`` parameter of a component whose page opens the session's
    channel: :data:`CHANNEL_ADDRESS`, the same on every page."""
    return param.Dict(
        default=CHANNEL_ADDRESS,
        constant=True,
        doc="Where the page finds the session's own websocket: its name beside the page's and "
        "the query argument its key goes in (app/served/channel_address.py).",
    )


def finite_number(value: object) -> int | float | None:
    """``value`` if it is an int of any size or a finite float (not a bool), else None: what
    a page's message may carry as a number."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    # math.isfinite would raise on an int past float's range.
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


class ChannelReceiver:
    """Mixin (before ``JSComponent`` among the bases) for a drawn component whose page sends
    its messages on the session's own websocket while it holds it, over Bokeh's otherwise:
    both reach :meth:`take_message`."""

    channel: SessionChannel | None = None
    """The session's own websocket (app/served/channel.py): messages go out on it while the page
    holds it open, over Bokeh's websocket otherwise."""

    def _handle_msg(self, msg: Any) -> None:
        # A message over Bokeh's websocket: the page does not hold the channel (any more).
        if self.channel is not None:
            self.channel.page_left()
        self.take_message(msg)

    def take_message(self, msg: Any) -> None:
        """Handle a message from the page (over Bokeh's websocket or the session's own)."""


@dataclass(frozen=True)
class ComposedFrame:
    """A frame ready to go: as numbered (``frame``), packed, and as its channel message."""

    frame: dict
    packed: dict
    message: bytes


class FramedComponent(ChannelReceiver):
    """Mixin (before ``JSComponent`` among the bases) for a drawn component with a
    ``frame`` parameter: each frame of :func:`app.page.frames.numbers_frame` takes the next
    number, and travels packed (:func:`app.page.frames.packed_frame`), a new page's first
    one too."""

    sequence = 0
    """The last frame's number: each frame takes the next."""

    channel_target = ""
    """The name the page's channel hands this component's frames to."""

    def next_frame(self, model: SimulationModel, parts: Iterable[str]) -> dict:
        """The frame of ``parts`` of ``model``, numbered after the last."""
        self.sequence += 1
        return numbers_frame(model, parts, self.sequence)

    def compose_frame(
        self, model: SimulationModel, parts: Iterable[str], handled: int
    ) -> ComposedFrame:
        """The next frame of ``parts`` of ``model``, packed and as its channel message, which
        says the numbers show the page's first ``handled`` messages: for
        :meth:`send_composed`. Safe in another thread while nothing else numbers or changes
        this component's frames (a session's refresh off the event loop)."""
        frame = self.next_frame(model, parts)
        packed = packed_frame(frame)
        return ComposedFrame(frame, packed, frame_message(packed, self.channel_target, handled))

    def send_composed(self, composed: ComposedFrame) -> None:
        """Send the page a frame :meth:`compose_frame` made: on the session's channel while
        the page holds it, else written into the page's models."""
        channel = self.channel
        if channel is not None and channel.send(composed.message):
            # Kept in step for a page that renders the component later.
            with param.parameterized.discard_events(self):
                self.frame = composed.frame
            return
        write_to_rendered_models(self, "frame", composed.frame, sent=composed.packed)

    def send_frame(self, model: SimulationModel, parts: Iterable[str]) -> None:
        """Send the page the frame of ``parts`` (what the model recomputed and it draws),
        showing every message of the page handled so far."""
        handled = self.channel.handled if self.channel is not None else 0
        self.send_composed(self.compose_frame(model, parts, handled))

    def send_values(self, **values: Any) -> None:
        """Set parameters that only flow to the page (``view``…) and send the page their
        new ``values``: on the session's channel while the page holds it, else written
        into the page's models (app/compat.py, ``write_to_rendered_models``)."""
        channel = self.channel
        if channel is not None and channel.send_values(values, self.channel_target):
            with param.parameterized.discard_events(self):
                self.param.update(**values)
            return
        for name, value in values.items():
            write_to_rendered_models(self, name, value)

    def _process_param_change(self, params: dict[str, Any]) -> dict[str, Any]:
        params = super()._process_param_change(params)  # type: ignore[misc]
        if params.get("frame"):
            params["frame"] = packed_frame(params["frame"])
        return params
