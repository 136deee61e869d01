"""Reading a run's results stream with the sequencer's memory bounded, whatever is in it.

Anyone who can write to Redis can put results of any size in a run's stream. An XREAD brings
whole messages into the reader's memory before it can look at them, so the sequencer never
XREADs results: a script run inside Redis (`_READ`) measures each message first and hands over
only those under the cap of one result, and at most the cap of one read in all (at least one
message, if it is under the result cap). Of a message over the cap it hands over the size and the
job it names, never its fields: the sequencer refuses it without holding it. The sequencer's
memory is then bounded by one read, however many or however large the messages are.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

from crovia_spider.cluster.connection import text

# KEYS[1]: the stream. ARGV: the last id read, the most messages, the cap of one result, the cap
# of one read. Returns a list of {id, fields} (a message handed over) or {id, size, job} (one over
# the result cap: its size and at most 64 bytes of the job it names).
_READ = """
local entries = redis.call('XRANGE', KEYS[1], '(' .. ARGV[1], '+', 'COUNT', tonumber(ARGV[2]))
local cap, room = tonumber(ARGV[3]), tonumber(ARGV[4])
local out = {}
for _, entry in ipairs(entries) do
  local fields, size, job = entry[2], 0, ''
  for i = 1, #fields do size = size + string.len(fields[i]) end
  if size > cap then
    for i = 1, #fields - 1, 2 do
      if fields[i] == 'job' then job = string.sub(fields[i + 1], 1, 64) end
    end
    out[#out + 1] = {entry[1], size, job}
  else
    if size > room and #out > 0 then break end
    room = room - size
    out[#out + 1] = entry
  end
end
return out
"""


class Message(NamedTuple):
    """One message of a results stream: its fields, or (over the cap) only its size and job."""

    id: str
    fields: dict[bytes, bytes] | None
    size: int = 0
    job: str = ""


class BoundedReader:
    """Reads a stream `count` messages at most at a time, under `result_cap` and `read_cap`."""

    def __init__(self, client: Any, result_cap: int, read_cap: int, count: int = 50) -> None:
        self.client = client
        self.result_cap, self.read_cap, self.count = result_cap, max(read_cap, 1), count
        self._read = client.register_script(_READ)

    def read(self, stream: str, last: str) -> list[Message]:
        """The messages after `last` (at least one when any is waiting)."""
        answer = self._read(keys=[stream], args=[last, self.count, self.result_cap, self.read_cap])
        return list(_messages(answer or ()))


def _messages(answer: Any) -> Iterator[Message]:
    for entry in answer:
        message_id = text(entry[0])
        if len(entry) == 3 and isinstance(entry[1], int):
            yield Message(message_id, None, entry[1], text(entry[2]))
            continue
        flat = entry[1]
        yield Message(message_id, {flat[i]: flat[i + 1] for i in range(0, len(flat) - 1, 2)})
