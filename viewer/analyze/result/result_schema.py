"""The analysis result's JSON members for Python, read from
viewer/analyze/result/result_schema.def.

result_schema.def is the one list of gpuprof.analyze/1's members (the C
writer, render_json.c, and compare's reader of summaries, summary.c, are
made from it); this module reads it with regular expressions, as
exporters/trace_format.py reads the trace format's:

    import result_schema as rs
    objs = rs.load()            # list name -> Obj
    objs["TRACE"].type_name == "Trace", objs["TRACE"].paths == ["traces[]"]
    objs["TRACE"].section == "Trace"        # SCHEMA.md's heading
    objs["TRACE"].members["cut_short"].type == "BOOL", .read == "REQ"
    rs.keys(objs): every member name the document may hold
"""

import os
import re
import types

DEF_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "result_schema.def")

TYPES = ("STR", "HEX", "U64", "I64", "I64N", "I64Z", "U64K", "OPT", "BOOL", "BOOLN", "NUM0", "NUM1",
         "NUM4", "NUM6", "NUM9", "ENUM", "STEP_WHEN", "OBJ", "ARR", "OBJ_OPT", "ARR_OPT")
UNITS = ("BYTES", "S", "NS", "COUNT", "FRACTION", "PID", "DEVICE", "STEP", "RANK", "INDEX", "NONE")
READS = ("REQ", "NUL", "OPT", "HAND", "NO")
# the JSON value each TYPE writes ("null" aside)
JSON_TYPES = {"STR": "string", "HEX": "string", "ENUM": "string", "STEP_WHEN": "string",
              "BOOL": "boolean", "BOOLN": "boolean", "OBJ": "object", "OBJ_OPT": "object",
              "ARR": "array", "ARR_OPT": "array"}

_LIST = re.compile(r'^#define GP_RS_(\w+)\(M\) /\* (\w+) at (.+?); SCHEMA\.md "([^"]+)" \*/ \\$')
_ENTRY = re.compile(r'^\tM\("(\w+)", (\w+\([^()]*\)|[\w.\[\]]+), (\w+), (\w+), (\w+), "([^"]*)"\)( \\)?$')


class Obj(types.SimpleNamespace):
    """id (the list's name), type_name, paths (where the document has it),
    section (SCHEMA.md's heading that documents it), members: key -> Member,
    in the order written."""


class Member(types.SimpleNamespace):
    """key, field (result.h's, or render_json.c's function), type, unit
    (for ENUM: the table of names), read, meaning, json (the JSON type,
    "number" for the numbers)."""


def load(path=DEF_PATH):
    """Reads result_schema.def; raises ValueError on a line it cannot read."""
    objs = {}
    cur = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if line.startswith("#define GP_RS_"):
                m = _LIST.match(line)
                if not m:
                    raise ValueError("%s:%d: a list's line it cannot read" % (path, n))
                cur = Obj(id=m.group(1), type_name=m.group(2), paths=m.group(3).split(", "),
                          section=m.group(4), members={})
                objs[cur.id] = cur
                continue
            if not line.startswith("\tM("):
                if line.strip() and cur is not None and not line.startswith(("/*", " *")):
                    raise ValueError("%s:%d: not an entry: %r" % (path, n, line))
                cur = None if not line.strip() else cur
                continue
            m = _ENTRY.match(line)
            if not m or cur is None:
                raise ValueError("%s:%d: an entry it cannot read" % (path, n))
            key, field, typ, unit, read, meaning, more = m.groups()
            if typ not in TYPES or read not in READS or (typ != "ENUM" and unit not in UNITS):
                raise ValueError("%s:%d: %s: type %s unit %s read %s" % (path, n, key, typ, unit, read))
            if key in cur.members:
                raise ValueError("%s:%d: %s twice in %s" % (path, n, key, cur.id))
            cur.members[key] = Member(key=key, field=field, type=typ, unit=unit, read=read,
                                      meaning=meaning, json=JSON_TYPES.get(typ, "number" if
                                                                           typ.startswith("NUM") else "integer"))
            if not more:
                cur = None
    if not objs:
        raise ValueError("%s: no lists" % path)
    return objs


def keys(objs):
    """Every member name the document may hold."""
    return {k for o in objs.values() for k in o.members}
