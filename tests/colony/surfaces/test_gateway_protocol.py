"""A response's head goes out with its body in one write; a streamed one's head at the loop's next turn."""

from __future__ import annotations

import asyncio
import socket

from colony.surfaces.gateway.protocol import HeadWithBody


class Reader(asyncio.Protocol):
    """The far end of a socket pair: every chunk it receives, in order."""

    def __init__(self) -> None:
        self.chunks: list[bytes] = []
        self.transport: asyncio.BaseTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()

    def data_received(self, data: bytes) -> None:
        self.chunks.append(data)


class CountingTransport:
    """A real socket transport that counts the writes it is given (the system calls a write costs)."""

    def __init__(self, transport: asyncio.Transport) -> None:
        self.transport = transport
        self.writes: list[bytes] = []

    def write(self, data: bytes) -> None:
        self.writes.append(data)
        self.transport.write(data)

    def is_closing(self) -> bool:
        return self.transport.is_closing()

    def close(self) -> None:
        self.transport.close()


async def pair() -> tuple[CountingTransport, Reader, asyncio.AbstractEventLoop]:
    loop = asyncio.get_running_loop()
    near, far = socket.socketpair()
    transport, _ = await loop.connect_accepted_socket(asyncio.Protocol, near)
    _, reader = await loop.connect_accepted_socket(Reader, far)
    return CountingTransport(transport), reader, loop  # type: ignore[arg-type]


async def received(reader: Reader, size: int) -> bytes:
    for _ in range(200):
        if sum(map(len, reader.chunks)) >= size:
            break
        await asyncio.sleep(0.01)
    return b"".join(reader.chunks)


async def test_the_head_and_the_body_are_one_write() -> None:
    counted, reader, loop = await pair()
    response = HeadWithBody(counted, loop)  # type: ignore[arg-type]
    response.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
    response.write(b"{}")
    assert counted.writes == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}"]
    assert await received(reader, 40) == counted.writes[0]
    counted.close()
    reader.close()


async def test_a_streamed_head_goes_out_alone_at_the_next_turn_and_order_holds() -> None:
    counted, reader, loop = await pair()
    response = HeadWithBody(counted, loop)  # type: ignore[arg-type]
    response.write(b"HEAD\r\n\r\n")
    assert counted.writes == []
    await asyncio.sleep(0)
    assert counted.writes == [b"HEAD\r\n\r\n"]  # a stream's head is not held for its first event
    response.write(b"event-1")
    response.write(b"event-2")
    assert counted.writes == [b"HEAD\r\n\r\n", b"event-1", b"event-2"]
    assert await received(reader, 23) == b"HEAD\r\n\r\nevent-1event-2"
    counted.close()
    reader.close()


async def test_closing_sends_the_held_head_first() -> None:
    counted, reader, loop = await pair()
    response = HeadWithBody(counted, loop)  # type: ignore[arg-type]
    response.write(b"HTTP/1.1 204 No Content\r\n\r\n")
    response.close()
    assert counted.writes == [b"HTTP/1.1 204 No Content\r\n\r\n"] and counted.is_closing()
    await asyncio.sleep(0)
    assert counted.writes == [b"HTTP/1.1 204 No Content\r\n\r\n"]  # the next turn writes nothing again
    reader.close()
