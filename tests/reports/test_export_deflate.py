"""The export's members are deflated by ISA-L (``isal``), not zlib: a standard zip, which
zipfile (and so any unzip) reads back and checks, member by member."""

from __future__ import annotations

import io
import zipfile
import zlib

from casino.reports import export
from tests.test_json_text import AWKWARD

# Text of the kind a day's export holds (JSON lines, CSV), long enough for several blocks.
TEXT = "".join(
    f'{{"seq": {n}, "action": "stake.placed", "payload": "{{\\"amount\\":{n * 7}}}"}}\n'
    for n in range(60_000)
)


def zipped(*members: tuple[str, str | bytes]) -> bytes:
    buffer = io.BytesIO()
    with (
        zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive,
        export._deflating(archive) as deflater,
    ):
        for name, text in members:
            deflater.writestr(name, text)
    return buffer.getvalue()


def test_each_member_is_deflated_by_isal_and_read_back_by_zipfile():
    data = zipped(("events.jsonl", TEXT), ("awkward.txt", AWKWARD), ("empty", b""))
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        assert archive.testzip() is None  # every member's CRC holds
        assert [i.compress_type for i in archive.infolist()] == [zipfile.ZIP_DEFLATED] * 3
        assert archive.read("events.jsonl").decode() == TEXT
        assert archive.read("awkward.txt").decode() == AWKWARD
        assert archive.read("empty") == b""


def test_the_compressor_zipfile_made_is_replaced_before_the_first_byte():
    """If zipfile stops keeping its compressor where ``_deflated_by_isal`` looks, this fails:
    the export would still be right, deflated by zlib, and three times slower to make."""
    with zipfile.ZipFile(io.BytesIO(), "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        member = export._deflated_by_isal(archive.open("events.jsonl", "w"))
        assert type(member._compressor).__module__.startswith("isal")  # type: ignore[attr-defined]
        member.write(TEXT.encode())
        member.close()
        stored = archive.open("events.jsonl").read()
        raw = archive.fp.getvalue()  # type: ignore[union-attr]
    assert stored == TEXT.encode()
    # What zlib's fastest level would have written is not what was written: ISA-L's own stream.
    by_zlib = zlib.compressobj(1, zlib.DEFLATED, -15)
    assert by_zlib.compress(TEXT.encode()) + by_zlib.flush() not in raw


def test_a_member_stored_as_it_is_is_left_alone():
    with zipfile.ZipFile(io.BytesIO(), "w", zipfile.ZIP_STORED) as archive:
        member = export._deflated_by_isal(archive.open("plain", "w"))
        assert member._compressor is None  # type: ignore[attr-defined]
        member.write(b"as it is")
        member.close()
        assert archive.open("plain").read() == b"as it is"
