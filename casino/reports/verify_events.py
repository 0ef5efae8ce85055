"""Shipped in the regulator's export, next to ``canonical.py``: recompute the hash of every event
of ``events.jsonl`` (docs/audit-chain.md), check that each links to the one before, and that the
last is the head hash signed in the report. Standard library only; run where the files are:
``python verify_events.py <head hash>``."""

import hashlib
import json
import sys

from canonical import event_bytes  # the copy of audit/canonical.py beside this file

head = sys.argv[1] if len(sys.argv) > 1 else None
previous = None
count = 0
with open("events.jsonl", encoding="utf-8") as lines:
    for line in lines:
        e = json.loads(line)
        if previous is not None and e["prev_hash"] != previous:
            sys.exit(f"event {e['seq']}: does not link to the event before it")
        digest = hashlib.sha256(
            event_bytes(
                seq=e["seq"],
                at=e["at"],
                actor_id=e["actor_id"],
                actor_name=e["actor_name"],
                action=e["action"],
                subject_type=e["subject_type"],
                subject_id=e["subject_id"],
                prev_hash=e["prev_hash"],
                payload=e["payload"],
            )
        ).hexdigest()
        if digest != e["hash"]:
            sys.exit(f"event {e['seq']}: its hash does not match its content")
        previous = digest
        count += 1
if head is not None and previous != head:
    sys.exit("the last event is not the head hash given")
print(f"{count} events verified; last hash {previous}")
