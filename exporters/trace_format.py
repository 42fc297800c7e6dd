"""The trace format's names for Python, read from exporters/trace_format.def.

trace_format.def is the one list of the trace's events, top-level members and
args fields (the C writer and reader are made from it); this module reads it
with regular expressions, so the Python checkers use the same names:

    from trace_format import EV, F, T, CAT, KIND, FORMAT
    EV.ALLOC.name == "alloc", EV.ALLOC.ph == "i", EV.ALLOC.cat == "memory"
    F.ADDR == "addr", T.TS == "ts", CAT.MEMORY == "memory", FORMAT == 1
    KIND.PINNED_HOST == "pinned_host"; KINDS: all memory kinds
    EV.ALLOC.args[F.ADDR].type == "HEX"

A checker imports it with this folder on sys.path, as tests/gpu/check_trace.py
does.
"""

import os
import re
import types

DEF_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trace_format.def")

_S = r'"([^"]*)"'
_FORMAT = re.compile(r"^GP_FORMAT\((\d+), " + _S + r"\)$", re.M)
_CAT = re.compile(r"^GP_CAT\((\w+), " + _S + r", " + _S + r"\)$", re.M)
_KIND = re.compile(r"^GP_KIND\((\w+), " + _S + r", " + _S + r"\)$", re.M)
_EVENT = re.compile(r"^GP_EVENT\((\w+), " + _S + r", '(.)', ('.'|0), (\w+), " + _S + r"\)$", re.M)
_TOP = re.compile(r"^GP_TOP\((\w+), " + _S + r", (AN|NO), (\w+), (\w+), " + _S + r"\)$", re.M)
_FIELD = re.compile(r"^GP_FIELD\((\w+), " + _S + r", (AN|NO)\)$", re.M)
_ARG = re.compile(r"^GP_ARG\((\w+), (\w+), (\w+), (\w+), (ALWAYS|SOMETIMES), " + _S + r"\)$", re.M)
_ENTRY = re.compile(r"^GP_\w+\(", re.M)

TYPES = ("U64", "I64", "NUM", "STR", "HEX", "BOOL", "ARR", "OBJ")
UNITS = ("BYTES", "NS", "US", "NONE")


class Event(types.SimpleNamespace):
    """id, name ("" where it varies), ph, scope (None or "g"/"p"/"t"), cat
    (the category's name, "" for metadata), meaning, args: field key -> Arg."""


class Arg(types.SimpleNamespace):
    """key, type, unit, always (bool), meaning."""


class Member(types.SimpleNamespace):
    """id, key, read (gpuprof analyze reads it), type, unit, meaning."""


def load(path=DEF_PATH):
    """Reads trace_format.def; raises ValueError on an entry it cannot read."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    entries = len(_ENTRY.findall(text))
    fmt = _FORMAT.findall(text)
    cats = {m[0]: m[1] for m in _CAT.findall(text)}
    kinds = {m[0]: m[1] for m in _KIND.findall(text)}
    fields = {}
    for fid, key, read in _FIELD.findall(text):
        fields[fid] = Member(id=fid, key=key, read=read == "AN", type=None, unit=None, meaning="")
    tops = {}
    for tid, key, read, typ, unit, meaning in _TOP.findall(text):
        tops[tid] = Member(id=tid, key=key, read=read == "AN", type=typ, unit=unit, meaning=meaning)
    events = {}
    for eid, name, ph, scope, cat, meaning in _EVENT.findall(text):
        events[eid] = Event(id=eid, name=name, ph=ph, scope=None if scope == "0" else scope[1],
                            cat=cats[cat], meaning=meaning, args={})
    args = _ARG.findall(text)
    for eid, fid, typ, unit, when, meaning in args:
        if typ not in TYPES or unit not in UNITS:
            raise ValueError("%s: %s.%s: type %s unit %s" % (path, eid, fid, typ, unit))
        key = fields[fid].key
        events[eid].args[key] = Arg(key=key, type=typ, unit=unit, always=when == "ALWAYS",
                                    meaning=meaning)
    read = len(fmt) + len(cats) + len(kinds) + len(events) + len(tops) + len(fields) + len(args)
    if read != entries or len(fmt) != 1:
        raise ValueError("%s: %d entries, %d read" % (path, entries, read))
    return int(fmt[0][0]), cats, kinds, events, tops, fields


FORMAT, _cats, _kinds, _events, _tops, _fields = load()
CAT = types.SimpleNamespace(**_cats)
KIND = types.SimpleNamespace(**_kinds)
KINDS = tuple(_kinds.values())  # the memory kinds, in the definition's order
EV = types.SimpleNamespace(**_events)
T = types.SimpleNamespace(**{k: v.key for k, v in _tops.items()})
F = types.SimpleNamespace(**{k: v.key for k, v in _fields.items()})
EVENTS = dict(_events)        # id -> Event
TOP_MEMBERS = dict(_tops)     # id -> Member
FIELDS = dict(_fields)        # id -> Member (type and unit: per event, in Event.args)

# Memory kinds as the GPU memory counter names them: its args, in order.
COUNTER_KINDS = tuple(EV.GPU_MEMORY.args)
# The fixed-name events by name (variable-name ones are told by ph and cat).
BY_NAME = {}
for _e in _events.values():
    if _e.name:
        BY_NAME.setdefault(_e.name, []).append(_e)
