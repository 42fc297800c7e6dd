#!/usr/bin/env python3
"""exporters/TRACE_FORMAT.md agrees with exporters/trace_format.def: every
field the Events table names for an event of the definition is one of that
event's args there, and every fixed event name of the definition is in the
table. Run: python3 tests/unit/test_trace_format_doc.py"""
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "exporters"))
import trace_format as tf  # noqa: E402

doc = open(os.path.join(ROOT, "exporters", "TRACE_FORMAT.md"), encoding="utf-8").read()
table = doc[doc.index("## Events"):doc.index("Memory kinds")]
FIELD_KEYS = {f.key for f in tf.FIELDS.values()}
errors = []
documented = set()
for row in table.splitlines():
    cells = row.split("|")
    if len(cells) < 5 or not cells[1].strip().startswith("`"):
        continue
    names = re.findall(r"`([^`]+)`", cells[1])
    events = [e for n in names for e in tf.BY_NAME.get(n, [])]
    documented.update(names)
    if not events:
        continue
    declared = {k for e in events for k in e.args}
    # the args column's `key` words, leaving out what parentheses say
    # about them (values, other events)
    args = cells[4]
    while re.search(r"\([^()]*\)", args):
        args = re.sub(r"\([^()]*\)", "", args)
    for key in re.findall(r"`([a-z_]+)`", args):
        if key in FIELD_KEYS and key not in declared:
            errors.append("%s: `%s` is not an args field of %s in trace_format.def"
                          % (names[0], key, ",".join(e.id for e in events)))
for e in tf.EVENTS.values():
    if e.name and e.name not in documented and e.ph != "M":
        errors.append("event %s (%r) is not in TRACE_FORMAT.md's Events table" % (e.id, e.name))
for err in errors:
    print("FAIL:", err)
print("%d events checked, %d problems" % (len(tf.EVENTS), len(errors)))
sys.exit(1 if errors else 0)
