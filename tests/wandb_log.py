"""Reading W&B's offline files back, for the trackers' tests."""

import json
import struct


def wandb_history(path, kind_wanted: str = "history"):
    """The history rows (or with kind_wanted "alert", the alerts) of a W&B transaction log (.wandb): LevelDB's log
    format (32 KiB blocks of CRC'd records) after a 7-byte W&B header, each record a protobuf Record; W&B's own reader
    left the public package."""
    from wandb.proto import wandb_internal_pb2

    data, block, pos, pending, rows = path.read_bytes(), 32768, 7, b"", []
    assert data[:4] == b":W&B"
    while pos + 7 <= len(data):
        if block - pos % block < 7:  # a block's tail too short for a header is padding
            pos += block - pos % block
            continue
        _crc, length, kind = struct.unpack("<IHB", data[pos : pos + 7])
        if kind == 0 and length == 0:
            pos += block - pos % block
            continue
        if pos + 7 + length > len(data):  # a record W&B is still writing: read the file again later
            break
        pending += data[pos + 7 : pos + 7 + length]
        pos += 7 + length
        if kind in (1, 4):  # FULL, or the LAST piece of a record split over blocks
            record = wandb_internal_pb2.Record.FromString(pending)
            pending = b""
            if record.WhichOneof("record_type") == kind_wanted == "history":
                rows.append(
                    {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item}
                )
            elif record.WhichOneof("record_type") == kind_wanted == "alert":
                rows.append({"title": record.alert.title, "text": record.alert.text, "level": record.alert.level})
    return rows
