"""Write ``plancheck/corpus/dora_tools.json``: plancheck's typed description of DORA's 108 tools.

    python scripts/make_dora_toolset.py [DORA_REFERENCE_DIR]

Facts are read from DORA's tool servers (``dora/tools/*.py``, parsed, never imported): each
tool's name, its parameters (name, whether it has a default, the annotation's JSON kind) and
the keys of the object its body returns. Everything else -- the kinds chosen, the families, the
wording of every description -- is plancheck's own. DORA's descriptions are not copied; only the
type word of a documented return key (``float``, ``list``, ...) is used to give that output a
kind. ``tests/corpus/test_dora_toolset.py`` checks the file against the servers again.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from plancheck.corpus.paths import dora_reference_dir  # noqa: E402
from tests.support.dora_tool_sources import SourceParam, SourceTool, read_tools  # noqa: E402

OUT = ROOT / "plancheck" / "corpus" / "dora_tools.json"

FAMILIES = {
    "seg": "Perception: a segmentation model turns imagery into a class mask (a raster file).",
    "ras": "Raster operations on image and mask files: areas, pixel counts, clipping, grids, "
           "terrain, sampling, vectorising.",
    "vec": "Vector operations on GeoJSON layers: buffers, distances, overlays, graphs and routes.",
    "calc": "Arithmetic on numbers returned by earlier calls.",
    "logi": "Logistics: ranking sites, sharing supplies, counting truck trips.",
    "poi": "Points of interest: search, filter, group and project POI layers.",
    "mask": "Combining binary masks into one multi-class mask.",
    "tool": "Control: repeat calls over a list (loop), pick the best of results (reduce), "
            "shape chart data.",
    "vis": "Maps, charts and report pages rendered to image files.",
    "report": "Evidence gathered from an executed trajectory.",
    "model": "A language model that writes the final summary of a trajectory.",
}
VERBS = {
    "seg": "Segments {what} and writes a mask",
    "ras": "Raster operation `{what}`",
    "vec": "Vector operation `{what}`",
    "calc": "Computes `{what}` of its numeric inputs",
    "logi": "Logistics step `{what}`",
    "poi": "POI step `{what}`",
    "mask": "Mask step `{what}`",
    "tool": "Control step `{what}`",
    "vis": "Renders `{what}` to an image file",
    "report": "Report step `{what}`",
    "model": "Model step `{what}`",
}

# Annotations -> (x-plancheck-type, JSON Schema types). DORA's list/dict aliases accept the
# same value written as a JSON string (its servers decode it), so a string literal passes.
_SCALARS = {"str": "String", "float": "Number", "int": "Integer", "bool": "Boolean"}
_SCHEMA = {"String": "string", "Number": "number", "Integer": "integer", "Boolean": "boolean"}


def input_schema(param: SourceParam) -> dict[str, object]:
    annotation = param.annotation.replace(" ", "")
    optional = annotation.startswith(("Optional[", "Opt")) or not param.required
    inner = annotation[len("Optional["):-1] if annotation.startswith("Optional[") else annotation
    nullable = annotation.startswith(("Optional[", "Opt"))
    if inner.startswith("Opt") and not inner.startswith("Optional"):
        inner = inner[3:]
    if inner in _SCALARS:
        kind = _SCALARS[inner]
        types: list[str] = [_SCHEMA[kind]]
        schema: dict[str, object] = {}
    elif inner.startswith(("List", "ListLoopItem")) and not inner.startswith("ListOrDict"):
        kind, types, schema = "List", ["array", "string"], {"x-plancheck-type": "List"}
    elif inner.startswith("Dict"):
        kind, types, schema = "Object", ["object", "string"], {"x-plancheck-type": "Object"}
    else:  # unions, Any: anything goes
        return {"description": f"any JSON value, {'optional' if optional else 'required'}"}
    if nullable:
        types.append("null")
    schema["type"] = types[0] if len(types) == 1 else types
    schema["description"] = _input_doc(param, kind, optional)
    return schema


def _input_doc(param: SourceParam, kind: str, optional: bool) -> str:
    del param
    article = "an" if kind[0] in "aeiouAEIOU" else "a"
    return f"{article} {kind.lower()}, {'optional' if optional else 'required'}"


_DOC_KINDS = (("list", "List"), ("dict", "Object"), ("float", "Number"), ("int", "Integer"),
              ("bool", "Boolean"), ("str", "String"))


def output_schema(key: str, documented: dict[str, str]) -> dict[str, object]:
    written = documented.get(key, "").lower()
    kind = next((k for word, k in _DOC_KINDS if written.startswith(word)), "Value")
    schema: dict[str, object] = {"x-plancheck-type": kind, "x-plancheck-polymorphic": True}
    schema["description"] = f"`{key}` of the call's observation"
    return schema


def describe(tool: SourceTool) -> str:
    prefix, _, rest = tool.name.partition(".")
    what = rest.replace("_", " ") if prefix == "seg" else rest
    sentence = VERBS.get(prefix, "Step `{what}`").format(what=what)
    needs = [p.name for p in tool.params if p.required]
    return f"{sentence}; needs {', '.join(needs) or 'nothing'} ({tool.server} server)."


def build(reference: Path) -> dict[str, object]:
    tools = read_tools(reference / "dora" / "tools")
    entries = []
    for name in sorted(tools):
        tool = tools[name]
        documented = dict(tool.docstring_returns)
        properties = {p.name: input_schema(p) for p in tool.params}
        required = [p.name for p in tool.params if p.required]
        keys = sorted(tool.returned_keys)
        entry: dict[str, object] = {
            "name": name,
            "description": describe(tool),
            "inputSchema": {"type": "object", "properties": properties,
                            **({"required": required} if required else {}),
                            "additionalProperties": False},
            "outputSchema": {"type": "object",
                             "properties": {k: output_schema(k, documented) for k in keys}},
            "_meta": {"dev.plancheck/tool": {"category": tool.server,
                                             "family": name.partition(".")[0]}},
        }
        entries.append(entry)
    return {
        "tools": entries,
        "_meta": {"dev.plancheck/toolset": {
            "name": "dora",
            "description": "The 108 tools of the DORA disaster-response benchmark, typed by "
                           "plancheck: inputs by JSON kind, outputs by the keys each call's "
                           "observation holds.",
            "families": [{"name": n, "doc": d} for n, d in FAMILIES.items()],
        }},
    }


def main() -> None:
    reference = Path(sys.argv[1]) if len(sys.argv) > 1 else dora_reference_dir()
    OUT.write_text(json.dumps(build(reference), indent=1, ensure_ascii=False) + "\n",
                   encoding="utf-8")
    print(f"wrote {OUT}")


if __name__ == "__main__":
    main()
